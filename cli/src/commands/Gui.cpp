// torchscope gui RUN.db [--screenshot out.png] [--size WxH]: the Qt timeline of a run.
#include <cstdio>
#include <memory>
#include <string>

#include "Commands.h"
#if defined(TORCHSCOPE_HAVE_GUI)
#include "torchscope/gui/App.h"
#endif

namespace torchscope::cli {

namespace {

struct GuiCommandOptions {
  std::string store;
  std::string screenshot;
  std::string size = "1600x900";
};

#if defined(TORCHSCOPE_HAVE_GUI)
void runGuiCommand(const GuiCommandOptions& options) {
  gui::GuiOptions gui_options;
  gui_options.store_path = options.store;
  gui_options.screenshot_path = options.screenshot;
  char separator = 0;
  if (std::sscanf(options.size.c_str(), "%d%c%d", &gui_options.width, &separator, &gui_options.height) != 3 ||
      separator != 'x' || gui_options.width < 400 || gui_options.height < 300 || gui_options.width > 8192 ||
      gui_options.height > 8192) {
    fail(kExitUsage, "--size must be WIDTHxHEIGHT between 400x300 and 8192x8192, not '" + options.size + "'");
  }
  const auto result = gui::runGui(gui_options);
  if (result) return;
  switch (result.error().code) {
    case ErrorCode::kNotFound:
    case ErrorCode::kNotTorchscope:
    case ErrorCode::kVersion:
    case ErrorCode::kCorrupt:
    case ErrorCode::kInvalidArgument: fail(kExitUsage, result.error().message);
    default: fail(kExitFailure, result.error().message);
  }
}
#else
void runGuiCommand(const GuiCommandOptions& /*options*/) {
  fail(kExitFailure, "the GUI was not built into this torchscope (it needs Qt6 Widgets and -DTORCHSCOPE_WITH_GUI=ON)");
}
#endif

}  // namespace

void addGuiCommand(CLI::App& app) {
  auto options = std::make_shared<GuiCommandOptions>();
  auto* cmd = app.add_subcommand("gui", "Open the timeline of a run in a window (Qt), or render it into a PNG");
  cmd->add_option("store", options->store, "The run's store (RUN.db)")->required();
  cmd->add_option("--screenshot", options->screenshot,
                  "Render the window offscreen into this PNG and exit (needs no display)");
  cmd->add_option("--size", options->size, "Window size as WIDTHxHEIGHT")->capture_default_str();
  cmd->callback([options] { runGuiCommand(*options); });
}

}  // namespace torchscope::cli
