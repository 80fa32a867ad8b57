// torchscope fix: applies the fixes of the findings to a copy of the job, re-runs it and measures
// the speed-up with a confidence interval and a parity check (compiler/Experiment.h).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "Commands.h"
#include "FixTools.h"
#include "LiveStatus.h"
#include "Output.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/base/JsonText.h"
#include "torchscope/base/Settings.h"
#include "torchscope/compiler/Experiment.h"
#include "torchscope/compiler/FixCatalog.h"
#include "torchscope/compiler/Report.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::cli {
namespace {

namespace tc = torchscope::compiler;

struct FixArguments {
  std::vector<std::string> positional;
  std::string format = "text";
  std::string output;
  bool list = false;
  bool no_collector = false;
  bool absolute_paths = false;
  int timeout_s = 3600;
  tc::FixOptions options;
};

bool isSqliteFile(const std::string& path) {
  std::ifstream input(path, std::ios::binary);
  char header[16] = {};
  input.read(header, sizeof(header));
  return input.gcount() == 16 && std::string(header, 15) == "SQLite format 3";
}

// The store of a run folder that `fix` re-runs: the job's first process wrote `run.db` (the others' stores beside it
// are read with it, as `advise DIR` reads them); a folder holding a single store of another name gives that one.
std::string storeOfRunFolder(const std::string& folder) {
  const std::filesystem::path first = std::filesystem::path(folder) / store::kRunFolderStoreName;
  if (isSqliteFile(first.string())) return first.string();
  auto stores = store::expandRunFolders({folder});
  if (!stores) fail(kExitUsage, folder + ": a folder without torchscope stores (give a store, or the job after --)");
  if (stores->size() != 1) {
    fail(kExitUsage, fmt::format("{}: {} stores and no {} (the store of the job's first process, whose command `fix` "
                                 "re-runs): give the store of the job to re-run",
                                 folder, stores->size(), store::kRunFolderStoreName));
  }
  return stores->front();
}

void listFixes() {
  for (const auto& spec : tc::fixCatalog()) {
    std::cout << fmt::format("{:<34} {:<8} {:<32} {}\n", spec.id, tc::kindName(spec.kind),
                             spec.kind == tc::FixKind::kAdvice ? "-" : std::string(tc::effectName(spec.effect)), spec.summary);
  }
}

void runFix(FixArguments& args) {
  if (args.list) {
    listFixes();
    return;
  }
  auto& options = args.options;
  if (args.positional.empty()) fail(kExitUsage, "fix needs RUN.db or `-- python script.py ...`");
  std::error_code not_a_folder;
  if (args.positional.size() == 1 && isSqliteFile(args.positional.front())) {
    options.store_path = args.positional.front();
  } else if (args.positional.size() == 1 && std::filesystem::is_directory(args.positional.front(), not_a_folder)) {
    options.store_path = storeOfRunFolder(args.positional.front());
  } else if (const std::string program = std::filesystem::path(args.positional.front()).filename().string();
             program.rfind("python", 0) == 0 || program == "torchrun" || program == "mpirun" || program == "mpiexec" ||
             program == "srun") {  // the compiler says which launchers it can re-run
    options.job_argv = args.positional;
  } else if (std::filesystem::exists(args.positional.front())) {
    fail(kExitUsage, args.positional.front() + ": not a torchscope store (give a store, or the job after --)");
  } else {
    fail(kExitUsage, args.positional.front() + ": no such store or job (use `torchscope fix -- python script.py ...`)");
  }
  if (args.format != "text" && args.format != "markdown" && args.format != "json" && args.format != "html") {
    fail(kExitUsage, "unknown --format '" + args.format + "' (text, markdown, json, html)");
  }
  // Before the runs: the store, the job's script and its other files must survive the report.
  std::vector<std::string> inputs = args.positional;
  if (!options.store_path.empty()) {
    inputs.push_back(options.store_path);
    for (const std::string& companion : store::companionStores(options.store_path)) inputs.push_back(companion);
  }
  checkOutput(args.output, inputs);
  locateFixTools(options);
  options.use_collector = !args.no_collector;
  options.allow_test_fixes = base::readFlag(base::settings::kTestFixes).value;
  options.run_timeout = std::chrono::seconds(args.timeout_s);
  LiveStatus status("torchscope fix", LiveStatus::onTerminal());
  watchRuns(options, status, std::cerr);
  auto report = tc::runFixExperiment(options);
  if (!report) failWith(report.error());
  if (!options.store_path.empty()) {
    if (auto saved = tc::saveFixExperiments(*report, options.store_path); !saved) {
      std::cerr << "torchscope fix: results not saved in the store: " << saved.error().message << "\n";
    }
  }
  std::string text;
  if (args.format == "json") {
    text = base::dumpJson(tc::reportJson(*report), 2) + "\n";
  } else if (args.format == "markdown") {
    text = tc::renderMarkdown(*report);
  } else if (args.format == "html") {
    text = tc::renderHtml(*report);
  } else {
    text = tc::renderText(*report);
  }
  // As advise does: a person reads paths under the current directory relative to it; JSON keeps them as recorded.
  if (args.format != "json" && !args.absolute_paths) {
    std::error_code no_directory;
    text = analyzer::pathsRelativeTo(text, std::filesystem::current_path(no_directory).string());
  }
  writeOutput(args.output, text);
}

}  // namespace

void addFixCommand(CLI::App& app) {
  auto args = std::make_shared<FixArguments>();
  auto* cmd = app.add_subcommand(
      "fix",
      "Apply the findings' fixes to a copy of the job and measure them against the original: the first baseline run "
      "is the profile, fixes that cannot act are skipped, a fix whose effect (fewer recompiles, breaks, syncs, ...) "
      "does not show in its first run stops there, the others stop once their speed-up interval decides; the accepted "
      "fixes are then measured together. Reports end-to-end, first-step, compile and steady-state times (wall and "
      "CPU), recompiles/breaks/syncs, loss parity and peak memory (host RSS; GPU allocated/reserved); a faster fix "
      "whose peak memory grows more than --max-memory-increase is rejected. "
      "Usage: torchscope fix RUN.db|RUN_DIR | torchscope fix [options] -- python train.py ARGS");
  cmd->add_option(
      "run_or_command", args->positional,
      "A store recorded by `torchscope run` (its findings and command line), its run folder (`run -o DIR/`: "
      "the store of the job's first process, DIR/run.db, with the others beside it), or after `--` the "
      "job to profile first");
  cmd->add_option("--fixes", args->options.fixes, "Fix ids to try, comma-separated, each ID or ID:ARG "
                                                  "(default: the fix ids of the findings, most impact first)");
  cmd->add_option("--repetitions", args->options.repetitions,
                  "Most runs per variant; a variant stops earlier once its interval decides")
      ->default_val(5)->check(numberIn(2, 100));
  cmd->add_option("--verdict-on", args->options.verdict_metric,
                  "The measure verdicts rest on: end_to_end_cpu (CPU time of the process tree), end_to_end_wall, "
                  "first_step_cpu|wall, compile_cpu|wall, steady_step_cpu|wall, or auto (end-to-end CPU time; wall "
                  "time for a job that uses CUDA)")
      ->default_val("auto");
  cmd->add_option("--max-fixes", args->options.max_fixes, "Measure at most this many fixes, most impact first (0: all that can act)")
      ->default_val(0)->check(numberIn(0, 100));
  cmd->add_option("--min-impact", args->options.min_impact,
                  "Skip findings estimated below this fraction of the run (explicit --fixes are always measured)")
      ->default_val(0.05)->check(numberIn(0.0, 1.0));
  cmd->add_option("--warmup-steps", args->options.warmup_steps, "Steps left out at the start of every run")->default_val(1)->check(numberIn(0, 1000000));
  cmd->add_option("--steps", args->options.window_steps,
                  "End every run cleanly after the warm-up and this many steps (SystemExit at the step boundary: "
                  "the job's finally blocks and atexit handlers run, its output is kept), so a long job is measured "
                  "over a window; a job that never gets that far runs whole (0: every run runs whole)")
      ->default_val(0)
      ->check(numberIn(0, 100000000));
  cmd->add_option("--parity-tolerance", args->options.parity_tolerance, "Largest relative difference of the job's parity values")
      ->default_val(tc::kDefaultParityTolerance)->check(numberIn(0.0, 1e9));
  cmd->add_option("--parity-pattern", args->options.parity_pattern,
                  "Regular expression whose first group is a parity value in the job's stdout (default: the number after 'loss')");
  cmd->add_option("--min-gain", args->options.min_total_gain,
                  "Smallest speed-up of the verdict measure worth accepting; smaller changes count as no change")
      ->default_val(0.02)->check(numberIn(0.0, 1.0));
  cmd->add_option("--max-memory-increase", args->options.max_memory_increase,
                  "Largest growth of peak memory (GPU reserved, else host RSS) a faster fix may cost, as a fraction "
                  "of the baseline; a fix above it is rejected")
      ->default_val(0.25)
      ->check(numberIn(0.0, 100.0));
  cmd->add_option("--format", args->format, "text, markdown, json or html")->default_val("text");
  cmd->add_option("-o,--output", args->output, "Write the report to this file (replaced only once complete) instead of stdout (-)");
  cmd->add_flag("--write", args->options.write,
                "Apply the accepted source fixes to the job's files that ran (backups: *.torchscope.bak)");
  cmd->add_flag("--no-collector", args->no_collector, "Run without libtorchscope_collector.so (launcher measurements only)");
  cmd->add_flag("--shared-compile-cache", args->options.shared_compile_cache,
                "Let the runs share the user's Inductor cache (later runs start warm) instead of a private cache per "
                "run that holds only Inductor's CPU-feature probes");
  cmd->add_option("--parallel-runs", args->options.parallel_runs,
                  "Runs at once, each pinned to its share of the CPUs (with as many threads); for CPU jobs on a "
                  "machine with cores to spare, not for jobs that share one GPU")
      ->default_val(1)
      ->check(numberIn(1, 64));
  cmd->add_flag("--keep-temp", args->options.keep_temp, "Keep the copies and run outputs in the temporary folder");
  cmd->add_option("--timeout", args->timeout_s, "Seconds one run may take before it is killed")->default_val(3600)->check(numberIn(1, 604800));
  cmd->add_flag("--list-fixes", args->list, "Print the fix catalogue and exit");
  cmd->add_flag("--absolute-paths", args->absolute_paths,
                "Print every path as recorded; by default text, markdown and html reports show paths under the current "
                "directory relative to it (json keeps them as recorded)");
  cmd->callback([args] { runFix(*args); });
}

}  // namespace torchscope::cli
