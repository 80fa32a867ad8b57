#pragma once

#include <map>
#include <optional>
#include <string>

namespace torchscope::tests {

struct ProcessOutput {
  int exitCode = -1;   // -1 when the process could not be started or did not exit normally
  std::string output;  // stdout and stderr together
};

// Runs `arguments` with the project's Python (TORCHSCOPE_PYTHON) in the source tree, blocking until it exits.
[[nodiscard]] ProcessOutput runPython(const std::string& arguments);

// key=value pairs of the first output line that starts with `prefix` (e.g. "final "); empty when there is none.
[[nodiscard]] std::map<std::string, std::string> lineFields(const std::string& output, const std::string& prefix);

// The field `key` of that line as a number, if present and numeric.
[[nodiscard]] std::optional<double> numericField(const std::string& output, const std::string& prefix,
                                                 const std::string& key);

}  // namespace torchscope::tests
