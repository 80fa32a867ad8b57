// torchscope compare: placeholder until the owning module lands; replaced in the same change.
#include "Commands.h"

namespace torchscope::cli {

void addCompareCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("compare", "(compare is not built yet)");
  cmd->allow_extras();
  cmd->callback([] { fail(kExitUsage, "'compare' is not available in this build"); });
}

}  // namespace torchscope::cli
