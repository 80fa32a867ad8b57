// torchscope advise: placeholder until the owning module lands; replaced in the same change.
#include "Commands.h"

namespace torchscope::cli {

void addAdviseCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("advise", "(advise is not built yet)");
  cmd->allow_extras();
  cmd->callback([] { fail(kExitUsage, "'advise' is not available in this build"); });
}

}  // namespace torchscope::cli
