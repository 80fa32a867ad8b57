// torchscope advise: ranked findings with fixes for one or more stores.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "AdviseDask.h"
#include "Commands.h"
#include "Output.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/RankFacts.h"
#include "torchscope/analyzer/Regions.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/base/Settings.h"
#include "torchscope/store/RunFolder.h"

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
    bool rank_facts = false;
    bool from_facts = false;
    std::vector<std::string> dask;  // given: run on Dask; its one value, if any, the scheduler's address
    int dask_workers = 0;
    double dask_timeout = kDaskConnectTimeoutSeconds;
  };
  auto options = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("advise", "Find what makes a run slow and propose fixes, most impact first");
  cmd->add_option("stores", options->stores,
                  "Stores to analyse, or run folders (every store in them: the ranks of a distributed job side by "
                  "side); with --from-facts, rank facts files or folders of them");
  cmd->add_flag("--rank-facts", options->rank_facts,
                "The map step: read one store, run every rule of its process and write its rank facts (compact JSON, "
                "docs/FORMAT.md) to -o, for a merge with --from-facts; with --format html they keep the timeline too");
  cmd->add_flag("--from-facts", options->from_facts,
                "The merge step: the report of a run from the rank facts files given (or every *.facts.json in a "
                "folder), without reading a store; the same report as advise on the stores themselves");
  cmd->add_option("--dask", options->dask,
                  "Map the stores on a Dask cluster, one task per store running the torchscope installed on the worker "
                  "where the store lies (a shared file system or the workers' own disks), and merge their facts here. "
                  "ADDRESS: a running scheduler (tcp://host:8786, from `dask scheduler`, dask-jobqueue or dask-mpi); "
                  "without it, a local cluster. Needs `pip install \"torchscope[dask]\"`")
      ->expected(0, 1);
  cmd->add_option("--dask-workers", options->dask_workers,
                  "With --dask and no ADDRESS: the local cluster's worker processes (default: one per CPU)")
      ->check(numberIn(1, 4096));
  cmd->add_option("--dask-timeout", options->dask_timeout,
                  "With --dask: seconds to wait for the scheduler and its first worker before failing (default 20)")
      ->check(numberIn(1.0, 3600.0));
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
  cmd->callback([options, cmd] {
    const auto format = analyzer::parseFormat(options->format);
    if (!format)
      fail(kExitUsage, "unknown format '" + options->format + "' (use " + std::string(analyzer::kFormatNames) + ")");
    analyzer::AnalyzeOptions analyze_options;
    if (*format == analyzer::Format::kHtml) analyze_options.timeline_buckets = kTimelineBuckets;
    analyze_options.user_code = userCodeRoots(options->user_code);
    const bool on_dask = cmd->count("--dask") > 0;
    DaskRequest dask;
    if (on_dask) {
      // `--dask RUN_DIR`: the value CLI11 took is the run folder, and the cluster a local one.
      std::error_code no_path;
      if (!options->dask.empty() && options->dask.front().find("://") == std::string::npos &&
          std::filesystem::exists(options->dask.front(), no_path)) {
        options->stores.insert(options->stores.begin(), options->dask.front());
      } else if (!options->dask.empty()) {
        dask.scheduler = options->dask.front();
      }
    }
    if (options->stores.empty()) fail(kExitUsage, "advise: give a store or a run folder (--help)");
    const int modes = int{options->rank_facts} + int{options->from_facts} + int{on_dask} + int{options->regions};
    if (modes > 1) fail(kExitUsage, "--rank-facts, --from-facts, --dask and --regions go one at a time");
    if ((modes > 0 && !options->regions) && (options->save || !options->against.empty())) {
      fail(kExitUsage,
           "--save and --against read the stores themselves: not with --rank-facts, --from-facts or --dask");
    }
    if (options->rank_facts) {
      if (options->stores.size() != 1)
        fail(kExitUsage, "--rank-facts maps one store (a run folder: one call per store)");
      checkOutput(options->output, options->stores);
      auto facts = analyzer::mapStore(options->stores.front(), analyze_options);
      if (!facts) failWith(facts.error());
      writeOutput(options->output, *facts + "\n");
      return;
    }
    if (on_dask) {
      dask.stores = options->stores;
      dask.workers = options->dask_workers;
      dask.timeout_s = options->dask_timeout;
      dask.format = options->format;
      dask.output = options->output;
      dask.user_code = analyze_options.user_code;
      dask.absolute_paths = options->absolute_paths;
      startDaskAdvise(dask);
    }
    analyzer::RenderOptions render_options;
    render_options.absolute_paths = options->absolute_paths;
    std::error_code no_directory;
    render_options.current_directory = std::filesystem::current_path(no_directory).string();
    render_options.color =
        isStandardOutput(options->output) && *format == analyzer::Format::kText && isatty(STDOUT_FILENO) != 0;
    if (options->from_facts) {
      checkOutput(options->output, options->stores);
      auto analysis = analyzer::mergeFactsFiles(options->stores);
      if (!analysis) failWith(analysis.error());
      writeOutput(options->output, analyzer::render(*analysis, *format, render_options));
      return;
    }
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
    if (options->regions) {
      if (stores->size() != 1) fail(kExitUsage, "--regions reads one store (give one rank's store of a run folder)");
      if (*format != analyzer::Format::kText && *format != analyzer::Format::kJson &&
          *format != analyzer::Format::kMarkdown && *format != analyzer::Format::kHtml) {
        fail(kExitUsage, "--regions writes text, json, markdown or html");
      }
      render_options.color = false;  // the region table is printed plain
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
    writeOutput(options->output, analyzer::render(*analysis, *format, render_options));
  });
}

}  // namespace torchscope::cli
