// The options of `torchscope optimize`, declared once for the core's command (parsing, --help) and for
// torchscope-optimize, which runs it.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "torchscope/compiler/Optimize.h"

namespace torchscope::cli {

inline constexpr const char* kOptimizeDescription =
    "Measure inference techniques on a TorchScript model with libtorch (inference mode, freeze + "
    "optimize_for_inference, channels_last, bf16): latency speed-up with a 95 % CI and output parity per variant";

struct OptimizeArguments {
  std::string model;
  std::vector<std::string> inputs;
  std::string format = "text";
  compiler::OptimizeOptions options;
};

void declareOptimizeOptions(CLI::App& app, OptimizeArguments& arguments);

}  // namespace torchscope::cli
