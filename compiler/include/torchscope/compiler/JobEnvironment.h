// The environment of a job torchscope starts, built in one place: `run`, every run of `fix` (and so of `demo`, which
// runs those two), and each rank of a distributed job they launch (torchrun and its ranks inherit it). The user's
// own settings stay as the user runs the job; torchscope's are added to them, never put in their place (an
// allocator preloaded into the job, tcmalloc or jemalloc, is part of what is measured, and so are the user's
// PYTHONPATH and torch-import hooks).
//
// Error contract: nothing fails.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torchscope/base/Settings.h"

namespace torchscope::compiler {

// What to change in the environment torchscope itself was started with.
struct JobEnvironment {
  std::map<std::string, std::string> set;  // set or replaced
  std::vector<std::string> unset;          // removed
};

struct JobRequest {
  std::string collector_library;  // empty: the job runs without the collector
  std::string store_path;         // where the collector writes (with the collector)
  // torchscope_compiler's folder: the runtime fixes' torch-import hook is imported from it when fixes are asked for
  // (runtime_fixes, else the environment's), and with `launcher` the job starts as torchscope_compiler.launch.
  std::string compiler_python_dir;
  bool launcher = false;
  std::optional<std::string> runtime_fixes;  // nullopt: as the environment has them
  std::optional<std::string> command_line;   // the run's command line; nullopt: the first process's own
  // Further settings for the job, in order; an empty value removes the setting.
  std::vector<std::pair<const base::Setting*, std::string>> settings;
};

// The changes for the job `request` describes, on top of this process's environment.
[[nodiscard]] JobEnvironment jobEnvironment(const JobRequest& request);

// This process's environment with `changes` applied, as "NAME=value" entries (for execve).
[[nodiscard]] std::vector<std::string> environmentWith(const JobEnvironment& changes);

// LD_PRELOAD for the job: the user's preloads (`user_preload`, the variable as found, ':' or ' ' separated) first,
// then the collector; the collector once, when the user had preloaded it already.
[[nodiscard]] std::string preloadWithCollector(std::string_view user_preload, std::string_view collector_library);

// LD_PRELOAD as the environment of this process has it, with the collector added (preloadWithCollector).
[[nodiscard]] std::string jobPreload(std::string_view collector_library);

// A ':' or ',' separated list (`existing`: PYTHONPATH, TORCHSCOPE_TORCH_IMPORT_HOOKS, ...) with `entry` appended,
// unless it holds it already.
[[nodiscard]] std::string listWith(std::string_view existing, std::string_view entry, char separator);

}  // namespace torchscope::compiler
