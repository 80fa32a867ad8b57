// The Python half of `optimize` on an exported program, seen from C++: the helper modules of torchscope_compiler
// (aoti_program, aoti_variants, aoti_baseline) started with the job's Python. No libtorch here.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "torchscope/base/Result.h"
#include "torchscope/compiler/Optimize.h"

namespace torchscope::compiler {

// "exported_program", "aoti_package", "torchscript" or "unknown" (from the zip entries; torch is not imported).
[[nodiscard]] Result<std::string> describeModel(const OptimizeOptions& options, const std::filesystem::path& scratch);

// Loads the program, checks the shapes (empty: its example inputs), writes inputs.pt and reference.pt into
// `scratch`; the JSON aoti_program.prepare prints. kInvalidArgument with the helper's line for the user's errors.
[[nodiscard]] Result<nlohmann::json> prepareProgram(const OptimizeOptions& options,
                                                    const std::filesystem::path& scratch);

struct CompiledVariant {
  bool ok = false;
  std::string reason;  // torch's, when !ok
  std::string package;
  double compile_s = 0;
  std::int64_t bytes = 0;
  bool cached = false;
};

// Compiles one variant into the workspace's cache (or finds it there); a failure is the variant's result.
[[nodiscard]] CompiledVariant compileVariant(const OptimizeOptions& options, const std::string& variant,
                                             const std::filesystem::path& inputs);

// The eager baseline in a Python worker, driven over a pipe so that its rounds interleave with the packages'.
class BaselineWorker {
 public:
  BaselineWorker() = default;
  BaselineWorker(const BaselineWorker&) = delete;
  BaselineWorker& operator=(const BaselineWorker&) = delete;
  ~BaselineWorker();

  [[nodiscard]] Result<void> start(const OptimizeOptions& options, const std::filesystem::path& inputs, int threads);
  // Per-call wall times in milliseconds of `calls` calls.
  [[nodiscard]] Result<std::vector<double>> time(int calls);

 private:
  [[nodiscard]] Result<std::string> readLine();
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffered_;
  std::string stderr_path_;
};

}  // namespace torchscope::compiler
