// torchscope-optimize MODEL --input SHAPE...: measures inference techniques on a TorchScript model in process
// (libtorch); `torchscope optimize` starts it with the same arguments.
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "Commands.h"
#include "OptimizeArguments.h"
#include "torchscope/base/JsonText.h"

namespace torchscope::cli {
namespace {

void runOptimizeCommand(OptimizeArguments& arguments) {
  namespace tc = torchscope::compiler;
  if (!std::filesystem::is_regular_file(arguments.model)) fail(kExitUsage, "no such model file: '" + arguments.model + "'");
  if (arguments.format != "text" && arguments.format != "json") {
    fail(kExitUsage, "unknown --format '" + arguments.format + "' (text, json)");
  }
  for (const auto& text : arguments.inputs) {
    auto shape = tc::parseShape(text);
    if (!shape) fail(kExitUsage, shape.error().message);
    arguments.options.input_shapes.push_back(*shape);
  }
  arguments.options.model_path = arguments.model;
  auto report = tc::runOptimize(arguments.options);
  if (!report) fail(kExitUsage, report.error().message);
  std::cout << (arguments.format == "json" ? torchscope::base::dumpJson(tc::optimizeJson(*report), 2) + "\n"
                                           : tc::renderOptimizeText(*report));
}

}  // namespace
}  // namespace torchscope::cli

int main(int argc, char** argv) {
  using namespace torchscope::cli;
  CLI::App app{kOptimizeDescription, "torchscope optimize"};
  OptimizeArguments arguments;
  declareOptimizeOptions(app, arguments);
  app.callback([&arguments] { runOptimizeCommand(arguments); });
  return runCommandLine(app, argc, argv);
}
