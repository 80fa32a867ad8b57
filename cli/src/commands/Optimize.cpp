// torchscope optimize: placeholder until the owning module lands; replaced in the same change.
#include "Commands.h"

namespace torchscope::cli {

void addOptimizeCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("optimize", "(optimize is not built yet)");
  cmd->allow_extras();
  cmd->callback([] { fail(kExitUsage, "'optimize' is not available in this build"); });
}

}  // namespace torchscope::cli
