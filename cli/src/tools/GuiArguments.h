// The options of `torchscope gui`, declared once for the core's command (parsing, --help) and for
// torchscope-gui, which runs it.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace torchscope::cli {

inline constexpr const char* kGuiDescription = "Open the timeline of a run in a window (Qt), or render it into a PNG";

struct GuiArguments {
  std::vector<std::string> stores;
  std::string screenshot;
  std::string size = "1600x900";
};

void declareGuiOptions(CLI::App& app, GuiArguments& arguments);

}  // namespace torchscope::cli
