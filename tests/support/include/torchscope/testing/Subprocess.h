// Runs programs as real subprocesses, directly, through the shell, under the collector, and captures what they
// printed and how they ended.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace torchscope::testing {

struct ProgramOutcome {
  int exit_code = -1;  // 128+n when signal n ended it, 127 when it could not be started
  std::string out;
  std::string err;
};

struct ProgramOptions {
  std::map<std::string, std::string> env;  // added to (or, with "", removed from) the environment
  int terminate_after_line_ms = -1;        // send SIGTERM this long after the first stdout line
};

[[nodiscard]] ProgramOutcome runProgram(const std::vector<std::string>& argv, const ProgramOptions& options = {});

// `command` through /bin/sh (append `2>&1` to read stderr in `out`, in order).
[[nodiscard]] ProgramOutcome runShell(const std::string& command);

// `torchscope <arguments>` through the shell, with the built binary; `environment`: "NAME=value" assignments put
// before the command.
[[nodiscard]] ProgramOutcome runTorchscope(const std::string& arguments, const std::string& environment = "");

// The project's Python (TORCHSCOPE_PYTHON) with `arguments`, in the source tree, stderr joined to stdout.
[[nodiscard]] ProgramOutcome runPython(const std::string& arguments);

// `torchscope run -o <store> -- <job...>`: the job under the collector.
[[nodiscard]] ProgramOutcome runUnderTorchscope(const std::filesystem::path& store, const std::vector<std::string>& job,
                                                const ProgramOptions& options = {});

// key=value pairs of the first output line that starts with `prefix` (e.g. "final "); empty when there is none.
[[nodiscard]] std::map<std::string, std::string> lineFields(const std::string& output, const std::string& prefix);

// The field `key` of that line as a number, if present and numeric.
[[nodiscard]] std::optional<double> numericField(const std::string& output, const std::string& prefix,
                                                 const std::string& key);

}  // namespace torchscope::testing
