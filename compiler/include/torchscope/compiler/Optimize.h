// `torchscope optimize`: measures inference techniques on a TorchScript model in process with
// libtorch — inference mode, freeze + optimize_for_inference, channels_last, bf16 — against the
// plain eval/no_grad baseline: latency with a 95 % CI of the speed-up and output parity.
//
// runOptimize lives in torchscope_optimize (built with libtorch), the rest in torchscope_compiler. Error contract: Result errors
// for a missing or non-TorchScript model file and for inputs the model rejects; a variant that
// fails or is not offered by this libtorch is reported as unavailable, not as an error.
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
};

struct OptimizeReport {
  std::string model;
  std::string inputs;
  int rounds = 0;
  int iterations = 0;
  std::vector<OptimizeVariant> variants;
};

// Parses "1,3,224,224" (or "1x3x224x224") into a shape; Error for anything else.
[[nodiscard]] Result<std::vector<std::int64_t>> parseShape(const std::string& text);

[[nodiscard]] Result<OptimizeReport> runOptimize(const OptimizeOptions& options);

[[nodiscard]] nlohmann::json optimizeJson(const OptimizeReport& report);
[[nodiscard]] std::string renderOptimizeText(const OptimizeReport& report);

}  // namespace torchscope::compiler
