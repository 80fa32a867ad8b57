// torchscope compare: the CI gate between a baseline run and a new one.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "Commands.h"
#include "Output.h"
#include "torchscope/analyzer/Compare.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::cli {

void addCompareCommand(CLI::App& app) {
  struct Options {
    std::string base;
    std::string candidate;
    double threshold = 5;
    std::string format = "text";
    std::string output;
    bool absolute_paths = false;
  };
  auto options = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "compare", "Compare a new run with a baseline: step time, compile time, new graph breaks, recompiles and syncs");
  cmd->add_option("base", options->base, "Baseline store, or run folder of per-rank stores (compared whole)")->required();
  cmd->add_option("new", options->candidate, "Store of the new run, or its run folder")->required();
  cmd->add_option("--threshold", options->threshold,
                  "Percent of step-time (or compile-time) growth that counts as a regression (default 5)")
      ->check(numberIn(0.0, 1000.0));
  cmd->add_option("--format", options->format, "Output format: text, json, markdown, sarif, junit or html");
  cmd->add_option("-o,--output", options->output, "Write the report to this file (replaced only once complete) instead of stdout (-)");
  cmd->add_flag("--absolute-paths", options->absolute_paths,
                "Print every path as recorded; by default text, markdown, html and junit reports show paths under the "
                "current directory relative to it");
  cmd->footer("A run folder is compared whole: the job's step time is its slowest rank's, its compile time the longest "
              "rank's, its problems those of every rank; the report adds each rank's step time and the merged findings "
              "that are new, gone or changed.\n"
              "Exit codes: 0 no regression, 1 a significant regression beyond the threshold, a new problem or a new "
              "divergent rank (or an I/O error), 2 bad input.");
  cmd->callback([options] {
    const auto format = analyzer::parseFormat(options->format);
    if (!format) fail(kExitUsage, "unknown format '" + options->format + "' (use " + std::string(analyzer::kFormatNames) + ")");
    std::vector<std::string> inputs;
    for (const auto& side : {options->base, options->candidate}) {
      auto stores = store::expandRunFolders({side});
      if (!stores) failWith(stores.error());
      inputs.insert(inputs.end(), stores->begin(), stores->end());
    }
    checkOutput(options->output, inputs);
    for (const auto& side : {options->base, options->candidate}) noteCompanionStores("compare", side);
    analyzer::CompareOptions compare_options;
    compare_options.threshold_percent = options->threshold;
    auto comparison = analyzer::compareStores(options->base, options->candidate, compare_options);
    if (!comparison) failWith(comparison.error());
    analyzer::RenderOptions render_options;
    render_options.color = isStandardOutput(options->output) && *format == analyzer::Format::kText && isatty(STDOUT_FILENO) != 0;
    render_options.absolute_paths = options->absolute_paths;
    std::error_code no_directory;
    render_options.current_directory = std::filesystem::current_path(no_directory).string();
    writeOutput(options->output, analyzer::renderComparison(*comparison, *format, render_options));
    if (comparison->failed()) throw CommandExit{kExitFailure};
  });
}

}  // namespace torchscope::cli
