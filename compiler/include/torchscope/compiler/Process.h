// Runs a child process with extra environment variables, its output captured in files.
//
// Error contract: Result errors when the process cannot be started; a child that fails or is
// killed at the timeout is a successful Result with its exit code (124 for a timeout, 128+N for
// signal N).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "torchscope/base/Result.h"

namespace torchscope::compiler {

struct ProcessSpec {
  std::vector<std::string> argv;               // argv[0] is looked up on PATH
  std::map<std::string, std::string> environment;  // set (or replaced) on top of ours
  std::vector<std::string> unset_environment;  // removed from the child's environment
  std::string working_directory;               // empty: ours
  std::string stdout_path;                     // empty: /dev/null
  std::string stderr_path;
  std::chrono::seconds timeout{3600};
  std::vector<int> cpus;  // empty: wherever the scheduler puts it; else pinned to these CPUs (and its children)
};

struct ProcessResult {
  int exit_code = 0;
  double wall_s = 0;
  double cpu_s = 0;  // user + system time of the child and of every descendant it waited for
  bool timed_out = false;
  // The largest peak RSS of any process of the child's tree that was waited for (ru_maxrss of
  // wait4): the job's own process, or a bigger child; a maximum, not a sum. -1 unknown.
  std::int64_t peak_rss_bytes = -1;
};

[[nodiscard]] Result<ProcessResult> runProcess(const ProcessSpec& spec);

// Reads a whole file; empty when it cannot be read.
[[nodiscard]] std::string readTextFile(const std::string& path);

}  // namespace torchscope::compiler
