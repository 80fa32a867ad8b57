// The collector's test jobs: the scripts under tests/collector/scripts.
#pragma once

#include <filesystem>
#include <string>

#include "torchscope/testing/Paths.h"

namespace torchscope::testing {

inline std::filesystem::path scriptPath(const std::string& script) {
  return sourcePath("tests/collector/scripts/" + script);
}

// The 1-based line of the script that carries the comment `# MARK:<tag>`.
inline int scriptLine(const std::string& script, const std::string& tag) { return markedLine(scriptPath(script), tag); }

}  // namespace torchscope::testing
