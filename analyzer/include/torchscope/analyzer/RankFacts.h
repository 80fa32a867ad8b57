// The analysis in two steps (docs/FORMAT.md, "Rank facts"). The map step reads one store, runs every rule of one
// process and writes its rank facts: a compact JSON document of what the report needs of that store (its run
// summary, findings, notes, per-step and collective figures, graph breaks and recompiles by line). The merge step
// builds the report of a whole run from facts alone: findings merged across stores, stragglers, divergent ranks,
// exposed communication. analyze() goes through both steps, so a run mapped where its stores lie (`advise --dask`)
// and one analysed on one machine give the same report.
//
// Error contract: mapStore() fails as analyze() does for a store it cannot read; mergeFacts() fails with
// kNotTorchscope for a document that is not rank facts, kVersion for facts of another format version or torchscope
// release, kCorrupt for damaged facts and kInvalidArgument for facts mapped with different options. Nothing throws.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/base/Result.h"

namespace torchscope::analyzer {

inline constexpr std::string_view kRankFactsFormat = "torchscope-rank-facts";
inline constexpr std::int64_t kRankFactsVersion = 1;
// A store's facts file is named after it: run.rank3.4711.db -> run.rank3.4711.db.facts.json.
inline constexpr std::string_view kRankFactsSuffix = ".facts.json";

// This torchscope's release ("0.1.0"): facts are merged only by the release that mapped them.
[[nodiscard]] std::string_view releaseVersion();

// The map step: the rank facts of one store, as one line of JSON text. `options.against` is not mapped.
[[nodiscard]] Result<std::string> mapStore(const std::string& path, const AnalyzeOptions& options = {});

// The facts of a store that the map step could not read (damaged, another schema version, a worker that died):
// merged as a store not analysed, named with `reason` in the report. `host` is the machine that tried, "" unknown.
[[nodiscard]] std::string unanalysedFacts(const std::string& path, const std::string& host, const std::string& reason);

// The merge step: the report of the facts documents (their text), in the order given; `names` says where each came
// from, for the errors. The stores' order is the report's, as analyze()'s.
[[nodiscard]] Result<Analysis> mergeFacts(const std::vector<std::string>& documents,
                                          const std::vector<std::string>& names);

// Reads facts files and merges them; a folder stands for its *.facts.json files, ordered as a run folder's stores.
[[nodiscard]] Result<Analysis> mergeFactsFiles(const std::vector<std::string>& paths);

}  // namespace torchscope::analyzer
