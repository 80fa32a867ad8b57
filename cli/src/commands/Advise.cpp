// torchscope advise: ranked findings with fixes for one or more stores.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "Commands.h"
#include "Output.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Regions.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/store/RunFolder.h"

#include "torchscope/base/Settings.h"
namespace torchscope::cli {

namespace {

constexpr int kTimelineBuckets = 160;

// --user-code directories and TORCHSCOPE_USER_CODE (':'-separated), as absolute paths.
std::vector<std::string> userCodeRoots(const std::vector<std::string>& given) {
  std::vector<std::string> paths = given;
  if (const char* environment = std::getenv(std::string(base::settings::kUserCode.name).c_str())) {
    std::string list = environment;
    for (std::size_t start = 0; start <= list.size();) {
      const auto end = std::min(list.find(':', start), list.size());
      if (end > start) paths.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  std::vector<std::string> roots;
  for (const auto& path : paths) {
    std::error_code error;
    std::string absolute = std::filesystem::absolute(path, error).lexically_normal().string();
    while (absolute.size() > 1 && absolute.back() == '/') absolute.pop_back();
    roots.push_back(error ? path : absolute);
  }
  return roots;
}

}  // namespace

void addAdviseCommand(CLI::App& app) {
  struct Options {
    std::vector<std::string> stores;
    std::string format = "text";
    std::string output;
    std::vector<std::string> user_code;
    bool save = false;
    bool absolute_paths = false;
    bool only_given = false;
    bool regions = false;
    std::string against;
  };
  auto options = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("advise", "Find what makes a run slow and propose fixes, most impact first");
  cmd->add_option("stores", options->stores,
                  "Stores to analyse, or run folders (every store in them: the ranks of a distributed job side by side)")
      ->required();
  cmd->add_option("--format", options->format,
                  "Output format: text (colour on a terminal), json, markdown, sarif (2.1.0), junit or html");
  cmd->add_option("-o,--output", options->output, "Write the report to this file (replaced only once complete) instead of stdout (-)");
  cmd->add_flag("--absolute-paths", options->absolute_paths,
                "Print every path as recorded; by default text, markdown, html and junit reports show paths under the "
                "current directory (or the job's folder) relative to it");
  cmd->add_flag("--only-given", options->only_given,
                "Read only the stores named; by default a store whose job's other processes (torchrun's ranks, "
                "workers) wrote stores beside it (run.db -> run.rank<r>.<pid>.db, run.<pid>.db) brings them in");
  cmd->add_flag("--regions", options->regions,
                "Print the compiled-region table instead of the findings: per torch.compile result its lines, frames, "
                "graphs, graph breaks, recompiles, compile time by stage, calls, run time per call, share of the "
                "steady-state step, eager fallbacks and CUDA graphs (text, json, markdown or html; one store)");
  cmd->add_option("--against", options->against,
                  "A store of the same job run with compilation off (" + std::string(base::settings::kFixes.name) +
                      "=eager, or the eager run of "
                      "`torchscope fix --fixes eager --keep-temp`): the region table adds each region's eager time per "
                      "call, speed-up and calls to pay off, and the findings say when compilation does not pay")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--save", options->save, "Also store the findings in each store (replacing earlier ones) for the GUI");
  cmd->add_option(
         "--user-code", options->user_code,
         "Count the files under this directory as your own code too (repeatable; " +
             std::string(base::settings::kUserCode.name) +
             " adds "
             "':'-separated ones). Findings point at the innermost line of your code; by default that is the "
             "job's folder and packages installed in editable mode, never site-packages or the standard library")
      ->allow_extra_args(false)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->footer("Exit codes: 0 report written (whatever it found), 1 I/O error, 2 bad input (missing, foreign or corrupt store).");
  cmd->callback([options] {
    const auto format = analyzer::parseFormat(options->format);
    if (!format) fail(kExitUsage, "unknown format '" + options->format + "' (use " + std::string(analyzer::kFormatNames) + ")");
    analyzer::AnalyzeOptions analyze_options;
    if (*format == analyzer::Format::kHtml) analyze_options.timeline_buckets = kTimelineBuckets;
    analyze_options.user_code = userCodeRoots(options->user_code);
    auto stores = store::expandRunFolders(options->stores);
    if (!stores) failWith(stores.error());
    if (!options->only_given && !options->regions) {
      // One job is one analysis: the launcher's store alone sees none of its ranks' steps.
      std::vector<std::string> added;
      stores = store::withCompanionStores(*stores, &added);
      if (!added.empty()) {
        std::string names;
        for (const auto& path : added)
          names += (names.empty() ? "" : ", ") + std::filesystem::path(path).filename().string();
        std::cerr << "torchscope advise: also reading the " << added.size()
                  << " store(s) the job's other processes wrote beside it: " << names
                  << " (--only-given reads only the stores named)\n";
      }
    }
    auto inputs = *stores;
    if (!options->against.empty()) inputs.push_back(options->against);
    checkOutput(options->output, inputs);
    analyzer::RenderOptions render_options;
    render_options.absolute_paths = options->absolute_paths;
    std::error_code no_directory;
    render_options.current_directory = std::filesystem::current_path(no_directory).string();
    if (options->regions) {
      if (stores->size() != 1) fail(kExitUsage, "--regions reads one store (give one rank's store of a run folder)");
      if (*format != analyzer::Format::kText && *format != analyzer::Format::kJson &&
          *format != analyzer::Format::kMarkdown && *format != analyzer::Format::kHtml) {
        fail(kExitUsage, "--regions writes text, json, markdown or html");
      }
      auto table = analyzer::regionTable(stores->front(), options->against);
      if (!table) failWith(table.error());
      writeOutput(options->output, analyzer::renderRegions(*table, *format, render_options));
      return;
    }
    analyze_options.against = options->against;
    auto analysis = analyzer::analyze(*stores, analyze_options);
    if (!analysis) failWith(analysis.error());
    if (options->save) {
      for (const auto& path : *stores) {
        // Each store keeps the findings of the whole analysis: a multi-process job is one job.
        if (auto saved = analyzer::saveFindings(path, analysis->findings); !saved) {
          failWith(saved.error());
        }
      }
    }
    render_options.color =
        isStandardOutput(options->output) && *format == analyzer::Format::kText && isatty(STDOUT_FILENO) != 0;
    writeOutput(options->output, analyzer::render(*analysis, *format, render_options));
  });
}

}  // namespace torchscope::cli
