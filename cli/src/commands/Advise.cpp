// torchscope advise: ranked findings with fixes for one or more stores.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "Commands.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Report.h"

namespace torchscope::cli {

namespace {

constexpr int kTimelineBuckets = 160;

int exitCodeFor(const Error& error) {
  return error.code == ErrorCode::kIo ? kExitFailure : kExitUsage;
}

void writeOutput(const std::string& text, const std::string& output_path) {
  if (output_path.empty()) {
    std::cout << text << std::flush;
    return;
  }
  std::ofstream file(output_path, std::ios::binary | std::ios::trunc);
  file << text;
  file.close();
  if (!file) fail(kExitFailure, "cannot write " + output_path);
}

}  // namespace

void addAdviseCommand(CLI::App& app) {
  struct Options {
    std::vector<std::string> stores;
    std::string format = "text";
    std::string output;
    bool save = false;
  };
  auto options = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("advise", "Find what makes a run slow and propose fixes, most impact first");
  cmd->add_option("stores", options->stores, "Stores to analyse (several for a multi-process job)")->required();
  cmd->add_option("--format", options->format,
                  "Output format: text (colour on a terminal), json, markdown, sarif (2.1.0), junit or html");
  cmd->add_option("-o,--output", options->output, "Write the report to this file instead of stdout");
  cmd->add_flag("--save", options->save, "Also store the findings in each store (replacing earlier ones) for the GUI");
  cmd->footer("Exit codes: 0 report written (whatever it found), 1 I/O error, 2 bad input (missing, foreign or corrupt store).");
  cmd->callback([options] {
    const auto format = analyzer::parseFormat(options->format);
    if (!format) fail(kExitUsage, "unknown format '" + options->format + "' (use " + std::string(analyzer::kFormatNames) + ")");
    analyzer::AnalyzeOptions analyze_options;
    if (*format == analyzer::Format::kHtml) analyze_options.timeline_buckets = kTimelineBuckets;
    auto analysis = analyzer::analyze(options->stores, analyze_options);
    if (!analysis) fail(exitCodeFor(analysis.error()), analysis.error().message);
    if (options->save) {
      for (const auto& path : options->stores) {
        // Each store keeps the findings of the whole analysis: a multi-process job is one job.
        if (auto saved = analyzer::saveFindings(path, analysis->findings); !saved) {
          fail(exitCodeFor(saved.error()), saved.error().message);
        }
      }
    }
    analyzer::RenderOptions render_options;
    render_options.color = options->output.empty() && *format == analyzer::Format::kText && isatty(STDOUT_FILENO) != 0;
    writeOutput(analyzer::render(*analysis, *format, render_options), options->output);
  });
}

}  // namespace torchscope::cli
