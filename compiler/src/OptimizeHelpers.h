// The Python half of `optimize` on an exported program, seen from C++: the helper modules of torchscope_compiler
// (aoti_program, aoti_variants, aoti_baseline, aoti_capture) started with the job's Python. No libtorch here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "EagerWorker.h"
#include "torchscope/base/Result.h"
#include "torchscope/compiler/Optimize.h"

namespace torchscope::compiler {

// "exported_program", "aoti_package", "torchscript", "aoti_shared_library" (a model .so of aot_compile) or "unknown"
// (from the zip entries or the ELF file; torch is not imported).
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

struct ExportedModule {
  std::string module;      // its class
  std::string defined_at;  // FILE:LINE of its forward
  std::string called_at;   // FILE:LINE of the job's call
  bool dynamic_batch = false;
};

// `optimize --export`: starts the job under aoti_capture in `worker` and waits for its end; the outermost module it
// called is then exported to `program` (written whole or not at all) and the worker serves that module as the job
// left it. kInvalidArgument for a job that is not a python job or a module torch.export refuses (torch's reason,
// the line); the job's output is copied to our stderr.
[[nodiscard]] Result<ExportedModule> startJobExport(const OptimizeOptions& options, const std::vector<std::string>& job,
                                                    const std::string& program, const std::filesystem::path& scratch,
                                                    EagerWorker& worker);

// The exported program run eagerly (aoti_baseline) in `worker`, ready for its inputs.
[[nodiscard]] Result<void> startBaseline(const OptimizeOptions& options, const std::filesystem::path& scratch,
                                         EagerWorker& worker);

// PYTHONPATH for the helpers: torchscope_compiler's folder, then the caller's.
[[nodiscard]] std::string helperPythonPath(const OptimizeOptions& options);
// The last non-blank line of a helper's stderr: its one-line reason.
[[nodiscard]] std::string lastHelperLine(const std::string& text);

}  // namespace torchscope::compiler
