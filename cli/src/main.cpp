// `torchscope`: the core command. It links neither Qt nor libtorch; `gui` and `optimize` start their own
// executables (see Commands.h).
#include <iostream>

#include "Commands.h"

int main(int argc, char** argv) {
  using namespace torchscope::cli;
  rememberArguments(argc, argv);
  CLI::App app{"torchscope: finds why a PyTorch job is slow, fixes it and measures the gain", "torchscope"};
  app.set_version_flag("--version", std::string("torchscope ") + TORCHSCOPE_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);

  addRunCommand(app);
  addAdviseCommand(app);
  addFixCommand(app);
  addCompareCommand(app);
  addStatsCommand(app);
  addImportCommand(app);
  addExportCommand(app);
  addGuiCommand(app);
  addDemoCommand(app);
  addOptimizeCommand(app);

  // CLI11 reports an unknown command as a missing one; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const auto* sub : app.get_subcommands({})) known = known || sub->check_name(argv[1]);
    if (!known) {
      std::cerr << "torchscope: unknown command '" << argv[1] << "'\n";
      std::cerr << "Run 'torchscope --help' for the list of commands.\n";
      return kExitUsage;
    }
  }
  return runCommandLine(app, argc, argv);
}
