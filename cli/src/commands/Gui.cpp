// torchscope gui RUN.db [--screenshot out.png] [--size WxH]: parsed here, run by torchscope-gui (Qt).
#include <memory>

#include "Commands.h"
#include "tools/GuiArguments.h"

namespace torchscope::cli {

void addGuiCommand(CLI::App& app) {
  auto arguments = std::make_shared<GuiArguments>();
  auto* cmd = app.add_subcommand("gui", std::string(kGuiDescription) + " (runs torchscope-gui)");
  declareGuiOptions(*cmd, *arguments);
  // The callback owns the parsed values: CLI11 writes into them while it parses.
  cmd->callback([arguments] {
    startTool({"torchscope-gui", "it needs Qt6 Widgets; build it with `cmake --build <build dir> --target "
                                 "torchscope-gui` (configured with -DTORCHSCOPE_WITH_GUI=ON)",
               ""});
  });
}

}  // namespace torchscope::cli
