// `torchscope optimize`: measures inference variants of a model in process with libtorch.
//
// An exported program (torch.export.save, a .pt2): each variant is compiled into an AOTInductor package by the job's
// Python (compiler/python/torchscope_compiler/aoti_*.py) and run in C++ with torch::inductor::AOTIModelPackageLoader,
// against the program run eagerly (the baseline, in a Python worker timed in the same interleaved rounds; with
// --export the job's own module is the baseline and the program run eagerly one more row): latency
// p50/p99 with intervals, the speed-up with its 95 % CI, output parity, compile time, package size, a recommendation.
// A TorchScript model (deprecated by PyTorch for deployment; kept for old models): inference mode, freeze +
// optimize_for_inference, channels_last, bf16 against the plain eval/no_grad baseline.
//
// runOptimize, runProgramOptimize and runExportOptimize live in torchscope_optimize (built with libtorch), the rest in
// torchscope_compiler. Error contract: Result errors (kInvalidArgument: the user's file or shapes; others: torch or
// the helper failed) for a file that is no model, a program from another torch release, inputs the model rejects;
// a variant that cannot be built or run is reported as that variant's result, not as an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "torchscope/base/Result.h"
#include "torchscope/compiler/Statistics.h"

namespace torchscope::compiler {

struct OptimizeOptions {
  std::string model_path;
  std::vector<std::vector<std::int64_t>> input_shapes;  // one float32 input per shape, seeded
  int rounds = 5;       // interleaved rounds (variant A, B, C, ... per round)
  int iterations = 20;  // timed forward calls per variant and round
  int warmup = 3;       // untimed calls per variant before the first round
  int threads = 0;      // intra-op threads; 0 keeps libtorch's default
  // Exported programs only:
  std::string python;                 // the job's Python, whose torch compiles the packages
  std::string compiler_python_dir;    // where torchscope_compiler is (PYTHONPATH)
  std::string workspace;              // packages cached by content hash
  std::vector<std::string> variants;  // empty: all of kProgramVariants
  int compile_timeout_s = 900;        // per variant; a compile past it is that variant's failure
  int seed = 0;
};

// The variants of an exported program, in the order they are built and reported.
inline const std::vector<std::string> kProgramVariants = {"aoti", "aoti-max-autotune", "bf16", "channels-last", "int8"};

// A p50 or p99 over all calls with its 95 % interval from the per-round values (geometric, Student's t).
struct LatencyQuantile {
  double value_ms = 0;
  double ci_low_ms = 0;
  double ci_high_ms = 0;
};

struct OptimizeVariant {
  std::string name;
  bool available = true;
  std::string note;                 // why unavailable, or what the variant does
  double latency_median_ms = 0;
  double latency_p10_ms = 0;
  double latency_p90_ms = 0;
  SpeedupInterval speedup;          // baseline over variant, per-round medians (Statistics.h)
  bool parity_ok = false;
  double max_abs_diff = 0;
  double max_rel_diff = 0;          // max |out - ref| / max(max |ref|, 1e-6)
  double tolerance = 0;
  // Exported programs only:
  LatencyQuantile p50;
  LatencyQuantile p99;
  double top1_agreement = -1;  // share of rows whose arg-max class agrees; < 0: the output is no class scores
  double compile_s = -1;       // < 0: not compiled here (the baseline, a package given as is)
  bool cached = false;         // the package came from the workspace's cache
  std::int64_t package_bytes = -1;
  std::string package;  // the AOTInductor package measured
};

struct OptimizeReport {
  std::string model;
  std::string inputs;
  int rounds = 0;
  int iterations = 0;
  std::vector<OptimizeVariant> variants;
  std::string kind = "torchscript";  // "exported_program", "aoti_package" or "torchscript"
  int threads = 0;
  std::string recommendation;  // the fastest variant within tolerance (exported programs); variants[0] is the baseline
  std::string recommendation_reason;
};

// Parses "1,3,224,224" (or "1x3x224x224") into a shape; Error for anything else.
[[nodiscard]] Result<std::vector<std::int64_t>> parseShape(const std::string& text);

[[nodiscard]] Result<OptimizeReport> runOptimize(const OptimizeOptions& options);
// An exported program or an AOTInductor package (options.input_shapes empty: the program's example inputs).
[[nodiscard]] Result<OptimizeReport> runProgramOptimize(const OptimizeOptions& options);

// `optimize --export`: runs the job (python script.py ... / python -m module ...) under aoti_capture, which exports
// the outermost module it calls, with that call's inputs, to `program` (written whole or not at all); then measures
// the program as runProgramOptimize does, against the job's own module (as the job left it, in the job's process):
// the baseline of the speed-ups and the reference of output parity. kInvalidArgument for a job that is not a python
// job or a module torch.export refuses (torch's reason, the line).
[[nodiscard]] Result<OptimizeReport> runExportOptimize(OptimizeOptions options, const std::vector<std::string>& job,
                                                       const std::string& program);

// The p50/p99 of every call and their intervals over rounds; then the recommendation (after the speed-ups).
void summarizeLatencies(const std::vector<std::vector<double>>& rounds, OptimizeVariant& variant);
void recommend(OptimizeReport& report);

[[nodiscard]] nlohmann::json optimizeJson(const OptimizeReport& report);
[[nodiscard]] std::string renderOptimizeText(const OptimizeReport& report);

}  // namespace torchscope::compiler
