// torchscope export RUN.db|RUN_DIR --format chrome -o trace.json: a store, or the ranks of a run folder side
// by side, as Chrome trace-event JSON.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "Commands.h"
#include "Output.h"
#include "torchscope/interop/ChromeExport.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::cli {

namespace {

struct ExportOptions {
  std::string store;
  std::string format = "chrome";
  std::string output = "-";
};

void runExport(const ExportOptions& options) {
  const bool to_stdout = isStandardOutput(options.output);
  std::error_code error;
  const bool folder = std::filesystem::is_directory(options.store, error);
  auto stores = store::expandRunFolders({options.store});
  if (!stores) failWith(stores.error());
  checkOutput(options.output, *stores);
  noteCompanionStores("export", options.store);
  Result<interop::ExportReport> report = makeError(ErrorCode::kInvalidArgument, "");
  if (folder) {
    report = to_stdout ? interop::exportMergedChromeTrace(*stores, std::cout)
                       : interop::exportMergedChromeTrace(*stores, options.output);
  } else {
    report = to_stdout ? interop::exportChromeTrace(options.store, std::cout)
                       : interop::exportChromeTrace(options.store, options.output);
  }
  // Standard output that refused the trace is reported once, by the command line's own check.
  if (!report && to_stdout && !std::cout) throw CommandExit{kExitFailure};
  if (!report) failWith(report.error());
  if (!to_stdout) {
    std::cerr << fmt::format("torchscope: wrote {} events ({} API->GPU flows) to {}\n", report->events, report->flows,
                             options.output);
  }
}

}  // namespace

void addExportCommand(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand(
      "export", "Export a store as Chrome trace-event JSON for Perfetto UI (ui.perfetto.dev) and chrome://tracing");
  cmd->add_option("store", options->store,
                  "The store (RUN.db), or a run folder: its ranks side by side on one clock, one process group per rank")
      ->required();
  cmd->add_option("--format", options->format, "Output format (only chrome)")->check(CLI::IsMember({"chrome"}));
  cmd->add_option("-o,--output", options->output, "The JSON file to write (replaced only once the export is complete), or - for standard output");
  cmd->callback([options] { runExport(*options); });
}

}  // namespace torchscope::cli
