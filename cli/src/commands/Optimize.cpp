// torchscope optimize MODEL --input SHAPE...: parsed here, run by torchscope-optimize (libtorch).
#include <memory>

#include "Commands.h"
#include "tools/OptimizeArguments.h"

namespace torchscope::cli {

void addOptimizeCommand(CLI::App& app) {
  auto arguments = std::make_shared<OptimizeArguments>();
  auto* cmd = app.add_subcommand("optimize", std::string(kOptimizeDescription) + " (runs torchscope-optimize)");
  declareOptimizeOptions(*cmd, *arguments);
  // The callback owns the parsed values: CLI11 writes into them while it parses.
  cmd->callback([arguments] {
    startTool({"torchscope-optimize", "it needs libtorch; build it with `cmake --build <build dir> --target "
                                      "torchscope-optimize` (configured with -DTORCHSCOPE_WITH_LIBTORCH=ON and torch "
                                      "importable by the build's Python)"});
  });
}

}  // namespace torchscope::cli
