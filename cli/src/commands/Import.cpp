// torchscope import: placeholder until the owning module lands; replaced in the same change.
#include "Commands.h"

namespace torchscope::cli {

void addImportCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("import", "(import is not built yet)");
  cmd->allow_extras();
  cmd->callback([] { fail(kExitUsage, "'import' is not available in this build"); });
}

}  // namespace torchscope::cli
