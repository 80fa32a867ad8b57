// torchscope fix: placeholder until the owning module lands; replaced in the same change.
#include "Commands.h"

namespace torchscope::cli {

void addFixCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("fix", "(fix is not built yet)");
  cmd->allow_extras();
  cmd->callback([] { fail(kExitUsage, "'fix' is not available in this build"); });
}

}  // namespace torchscope::cli
