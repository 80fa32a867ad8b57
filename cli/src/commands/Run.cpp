// torchscope run: placeholder until the owning module lands; replaced in the same change.
#include "Commands.h"

namespace torchscope::cli {

void addRunCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "(run is not built yet)");
  cmd->allow_extras();
  cmd->callback([] { fail(kExitUsage, "'run' is not available in this build"); });
}

}  // namespace torchscope::cli
