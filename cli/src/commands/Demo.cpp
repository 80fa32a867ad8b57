// torchscope demo: placeholder until the owning module lands; replaced in the same change.
#include "Commands.h"

namespace torchscope::cli {

void addDemoCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "(demo is not built yet)");
  cmd->allow_extras();
  cmd->callback([] { fail(kExitUsage, "'demo' is not available in this build"); });
}

}  // namespace torchscope::cli
