// A run folder: the stores of one job's processes side by side (`torchscope run -o DIR/`, or
// TORCHSCOPE_OUTPUT naming a directory), one per rank, named `run[.rank<r>].<pid>.db`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "torchscope/base/Result.h"

namespace torchscope::store {

// Run attributes the collector writes in a distributed job (docs/FORMAT.md).
inline constexpr std::string_view kLauncherAttribute = "dist.launcher";
inline constexpr std::string_view kJobIdAttribute = "dist.job_id";

// The store the job's first process writes inside a run folder.
inline constexpr std::string_view kRunFolderStoreName = "run.db";

// Replaces every directory among `paths` by the stores in it (`*.db`, ordered by rank, then name);
// files are kept as given. Fails with kNotFound for a missing path or a directory without stores.
[[nodiscard]] Result<std::vector<std::string>> expandRunFolders(const std::vector<std::string>& paths);

// The stores the other processes of a store's job wrote beside it: for `DIR/run.db`, every
// `DIR/run[.rank<r>].<pid>.db` (the collector's names, docs/collector.md), ordered by rank, then name.
// Empty for a store that is itself one of those, or whose job wrote no other.
[[nodiscard]] std::vector<std::string> companionStores(const std::string& store_path);

// `paths` with the companion stores of every file among them added after it (each once; a store given
// anyway stays where it was given). `added` receives the stores that were brought in.
[[nodiscard]] std::vector<std::string> withCompanionStores(const std::vector<std::string>& paths,
                                                           std::vector<std::string>* added = nullptr);

// The rank in a store's file name (`run.rank3.1234.db` -> 3), -1 when it has none.
[[nodiscard]] long long rankInStoreName(std::string_view file_name);

}  // namespace torchscope::store
