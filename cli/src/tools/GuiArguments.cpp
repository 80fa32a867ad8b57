#include "GuiArguments.h"

namespace torchscope::cli {

void declareGuiOptions(CLI::App& app, GuiArguments& arguments) {
  app.add_option("stores", arguments.stores,
                 "The run's store (RUN.db), or several stores or run folders (every store in them: the ranks of a "
                 "distributed job side by side; one run folder of more than 8 stores opens as a table of its ranks, "
                 "each opened on demand)")
      ->required();
  app.add_option("--screenshot", arguments.screenshot,
                 "Render the window offscreen into this PNG and exit (needs no display)");
  app.add_option("--size", arguments.size, "Window size as WIDTHxHEIGHT")->capture_default_str();
}

}  // namespace torchscope::cli
