// torchscope gui: placeholder until the owning module lands; replaced in the same change.
#include "Commands.h"

namespace torchscope::cli {

void addGuiCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("gui", "(gui is not built yet)");
  cmd->allow_extras();
  cmd->callback([] { fail(kExitUsage, "'gui' is not available in this build"); });
}

}  // namespace torchscope::cli
