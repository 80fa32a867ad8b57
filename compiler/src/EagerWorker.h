// An eager worker of `optimize`: a Python process that runs a module in eager mode and answers the requests of
// torchscope_compiler/eager_worker.py over a pipe, so that its calls are timed in the same interleaved rounds as the
// compiled packages. Two kinds: the exported program (aoti_baseline) and, with --export, the job's own module
// (aoti_capture, which first runs the whole job).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "torchscope/base/Result.h"

namespace torchscope::compiler {

struct EagerWorkerSpec {
  std::vector<std::string> argv;  // argv[0]: the job's Python
  std::string python_path;        // PYTHONPATH, torchscope_compiler's folder first
  std::filesystem::path stderr_path;
  std::string name;         // how messages name it: "the eager baseline", "the job"
  bool lend_stdin = false;  // our standard input stays the job's (descriptor in TORCHSCOPE_JOB_STDIN)
};

class EagerWorker {
 public:
  EagerWorker() = default;
  EagerWorker(const EagerWorker&) = delete;
  EagerWorker& operator=(const EagerWorker&) = delete;
  ~EagerWorker();

  [[nodiscard]] Result<void> start(EagerWorkerSpec spec);
  // Waits for `ready`; an error with the worker's last line on stderr when it ended first.
  [[nodiscard]] Result<void> awaitReady();
  // The exit status of a worker that has ended (waits for it); 128+N for signal N.
  [[nodiscard]] int exitCode();
  [[nodiscard]] Result<void> loadInputs(const std::filesystem::path& inputs, int threads);
  // One call; its outputs as STEM.json/STEM.bin in float32.
  [[nodiscard]] Result<void> writeOutputs(const std::filesystem::path& stem);
  // Per-call wall times in milliseconds of `calls` calls.
  [[nodiscard]] Result<std::vector<double>> time(int calls);

 private:
  [[nodiscard]] Result<std::string> request(const std::string& line);
  [[nodiscard]] Result<std::string> readLine();
  [[nodiscard]] Error stopped(const std::string& what) const;
  EagerWorkerSpec spec_;
  pid_t pid_ = -1;
  int status_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffered_;
};

}  // namespace torchscope::compiler
