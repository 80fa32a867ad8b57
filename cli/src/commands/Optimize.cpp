// torchscope optimize: measures inference techniques on a TorchScript model in process (libtorch).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "Commands.h"
#include "torchscope/compiler/Optimize.h"

namespace torchscope::cli {
namespace {

struct OptimizeArguments {
  std::string model;
  std::vector<std::string> inputs;
  std::string format = "text";
  torchscope::compiler::OptimizeOptions options;
};

void runOptimize(OptimizeArguments& args) {
  namespace tc = torchscope::compiler;
  if (!std::filesystem::is_regular_file(args.model)) fail(kExitUsage, "no such model file: '" + args.model + "'");
  if (args.format != "text" && args.format != "json") fail(kExitUsage, "unknown --format '" + args.format + "' (text, json)");
  for (const auto& text : args.inputs) {
    auto shape = tc::parseShape(text);
    if (!shape) fail(kExitUsage, shape.error().message);
    args.options.input_shapes.push_back(*shape);
  }
#ifdef TORCHSCOPE_HAS_LIBTORCH
  args.options.model_path = args.model;
  auto report = tc::runOptimize(args.options);
  if (!report) fail(kExitUsage, report.error().message);
  std::cout << (args.format == "json" ? tc::optimizeJson(*report).dump(2) + "\n" : tc::renderOptimizeText(*report));
#else
  fail(kExitUsage, "'optimize' needs a build with libtorch (TORCHSCOPE_WITH_LIBTORCH=ON)");
#endif
}

}  // namespace

void addOptimizeCommand(CLI::App& app) {
  auto args = std::make_shared<OptimizeArguments>();
  auto* cmd = app.add_subcommand(
      "optimize",
      "Measure inference techniques on a TorchScript model with libtorch (inference mode, freeze + "
      "optimize_for_inference, channels_last, bf16): latency speed-up with a 95 % CI and output parity per variant");
  cmd->add_option("model", args->model, "A TorchScript model saved with torch.jit.save")->required();
  cmd->add_option("--input", args->inputs, "Shape of one float32 input, e.g. 1,3,224,224 (repeat for several inputs)")
      ->required();
  cmd->add_option("--rounds", args->options.rounds, "Interleaved timing rounds")->default_val(5)->check(CLI::Range(1, 1000));
  cmd->add_option("--iterations", args->options.iterations, "Timed calls per variant and round")
      ->default_val(20)->check(CLI::Range(1, 100000));
  cmd->add_option("--warmup", args->options.warmup, "Untimed calls per variant first")->default_val(3)->check(CLI::Range(0, 1000));
  cmd->add_option("--threads", args->options.threads, "Intra-op threads (0: libtorch's default)")->default_val(0)->check(CLI::Range(0, 1024));
  cmd->add_option("--format", args->format, "text or json")->default_val("text");
  cmd->callback([args] { runOptimize(*args); });
}

}  // namespace torchscope::cli
