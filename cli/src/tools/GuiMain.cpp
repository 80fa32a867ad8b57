// torchscope-gui RUN.db... [--screenshot out.png] [--size WxH]: the Qt timeline of a run (several
// stores or a folder of them: ranks side by side); `torchscope gui` starts it with the same arguments.
#include <cstdio>

#include "Commands.h"
#include "GuiArguments.h"
#include "Output.h"
#include "torchscope/gui/App.h"

namespace torchscope::cli {
namespace {

void runGuiCommand(const GuiArguments& arguments) {
  gui::GuiOptions options;
  options.store_paths = arguments.stores;
  options.screenshot_path = arguments.screenshot;
  char separator = 0;
  if (std::sscanf(arguments.size.c_str(), "%d%c%d", &options.width, &separator, &options.height) != 3 ||
      separator != 'x' || options.width < 400 || options.height < 300 || options.width > 8192 ||
      options.height > 8192) {
    fail(kExitUsage, "--size must be WIDTHxHEIGHT between 400x300 and 8192x8192, not '" + arguments.size + "'");
  }
  const auto result = gui::runGui(options);
  if (!result) failWith(result.error());
}

}  // namespace
}  // namespace torchscope::cli

int main(int argc, char** argv) {
  using namespace torchscope::cli;
  CLI::App app{kGuiDescription, "torchscope gui"};
  GuiArguments arguments;
  declareGuiOptions(app, arguments);
  app.callback([&arguments] { runGuiCommand(arguments); });
  return runCommandLine(app, argc, argv);
}
