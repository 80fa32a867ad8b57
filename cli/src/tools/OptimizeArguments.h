// The options of `torchscope optimize`, declared once for the core's command (parsing, --help) and for
// torchscope-optimize, which runs it.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "torchscope/compiler/Optimize.h"

namespace torchscope::cli {

inline constexpr const char* kOptimizeDescription =
    "Measure inference variants of a model in C++ with libtorch: for an exported program (torch.export), AOTInductor "
    "packages (default, max-autotune, bf16, channels-last, int8) against the program run eagerly (with --export: "
    "against the job's own module), with p50/p99, "
    "speed-up, parity, compile time, package size and a recommendation; TorchScript models (deprecated by PyTorch "
    "for deployment) still get inference mode, freeze, channels_last and bf16";

struct OptimizeArguments {
  std::vector<std::string> words;  // the model, or with --export the job's command line
  bool export_job = false;
  std::string program;
  std::vector<std::string> inputs;
  std::string format = "text";
  std::string workspace;
  compiler::OptimizeOptions options;
};

void declareOptimizeOptions(CLI::App& app, OptimizeArguments& arguments);

}  // namespace torchscope::cli
