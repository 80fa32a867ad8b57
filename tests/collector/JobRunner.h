// Runs a test job (a script under tests/collector/scripts) as a real subprocess, through
// `torchscope run` or with LD_PRELOAD, and captures what it printed and how it ended.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace torchscope::test {

struct JobResult {
  int exit_code = -1;  // 128+n when signal n ended it
  std::string out;
  std::string err;
};

struct JobOptions {
  std::map<std::string, std::string> env;  // added to (or, with "", removed from) the environment
  int terminate_after_line_ms = -1;        // send SIGTERM this long after the first stdout line
};

[[nodiscard]] JobResult runJob(const std::vector<std::string>& argv, const JobOptions& options = {});

std::filesystem::path scriptPath(const std::string& name);
std::filesystem::path collectorLibrary();
std::filesystem::path torchscopeExecutable();
// The 1-based line of the script that carries the comment `# MARK:<tag>`.
int markedLine(const std::string& script, const std::string& tag);
// A fresh, empty directory for one test.
std::filesystem::path freshDirectory(const std::string& name);

}  // namespace torchscope::test
