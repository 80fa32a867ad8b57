// torchscope export: placeholder until the owning module lands; replaced in the same change.
#include "Commands.h"

namespace torchscope::cli {

void addExportCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("export", "(export is not built yet)");
  cmd->allow_extras();
  cmd->callback([] { fail(kExitUsage, "'export' is not available in this build"); });
}

}  // namespace torchscope::cli
