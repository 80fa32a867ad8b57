// torchscope import FILE|DIR... -o RUN.db|RUN_DIR/: TORCH_TRACE logs and PyTorch profiler traces into a store, or
// into a run folder with one store per file (per rank).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "Commands.h"
#include "Output.h"
#include "torchscope/interop/Import.h"

namespace torchscope::cli {

namespace {

struct ImportOptions {
  std::vector<std::string> inputs;
  std::string output;
  bool quiet = false;
};

void runImport(const ImportOptions& options) {
  std::string command_line = "torchscope import";
  for (const auto& input : options.inputs) command_line += " " + input;
  if (options.output.empty()) fail(kExitUsage, "--output: name the store or run folder to write");
  std::error_code error;
  const bool run_folder = options.output.back() == '/' || std::filesystem::is_directory(options.output, error);
  if (!run_folder) checkOutput(options.output, options.inputs);
  auto report = run_folder ? interop::importToRunFolder(options.inputs, options.output, command_line)
                           : interop::importToStore(options.inputs, options.output, command_line);
  if (!report) failWith(report.error());
  if (!options.quiet) {
    for (const auto& note : report->notes) std::cerr << "torchscope: " << note << "\n";
  }
  std::cerr << "torchscope: " << interop::summarize(*report) << " -> " << options.output << "\n";
}

}  // namespace

void addImportCommand(CLI::App& app) {
  auto options = std::make_shared<ImportOptions>();
  auto* cmd = app.add_subcommand(
      "import",
      "Import TORCH_TRACE logs (a file or a directory of per-rank files) and PyTorch profiler (Kineto) traces "
      "(.json or .json.gz) into a new store. Malformed lines are skipped, counted and reported.");
  cmd->add_option("inputs", options->inputs, "Files or directories to import")->required();
  cmd->add_option("-o,--output", options->output,
                  "The store to create (RUN.db; an existing store is replaced once the import is complete), or a run "
                  "folder (a directory, or a path ending in '/'): one store per file, named by its rank, for "
                  "advise/export over the ranks")
      ->required();
  cmd->add_flag("-q,--quiet", options->quiet, "Do not list ignored directory entries");
  cmd->callback([options] { runImport(*options); });
}

}  // namespace torchscope::cli
