#include "torchscope/compiler/Experiment.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>

#include "Candidates.h"
#include "Outcome.h"
#include "Rounds.h"
#include "Runner.h"
#include "torchscope/base/Settings.h"
#include "torchscope/compiler/FixCatalog.h"
#include "torchscope/compiler/Measurement.h"
#include "torchscope/compiler/Workspace.h"
#include "torchscope/store/Reader.h"

namespace torchscope::compiler {
namespace fs = std::filesystem;

namespace {

struct TempFolder {
  fs::path path;
  bool keep = false;
  ~TempFolder() {
    std::error_code error;
    if (!keep && !path.empty()) fs::remove_all(path, error);
  }
};

Result<fs::path> makeTempFolder() {
  std::string pattern = (fs::temp_directory_path() / "torchscope-fix-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) return makeError(ErrorCode::kIo, "cannot create a temporary folder");
  return fs::path(pattern);
}

Result<std::vector<std::string>> jobCommand(const FixOptions& options) {
  if (!options.job_argv.empty()) return options.job_argv;
  auto reader = store::Reader::open(options.store_path);
  if (!reader) return reader.error();
  auto run = (*reader)->run();
  if (!run) return run.error();
  auto words = splitCommandLine(run->command_line);
  if (words.empty()) return makeError(ErrorCode::kInvalidArgument, options.store_path + " records no command line");
  return words;
}

Result<Metric> verdictMetric(const FixOptions& options, const RunMeasurement& first_baseline) {
  if (options.verdict_metric != "auto") return parseMetric(options.verdict_metric);
  // A distributed job runs at the pace of its slowest rank's steps; the process tree's CPU time adds up
  // every rank's waiting in collectives.
  if (first_baseline.ranks > 0)
    return Metric{Measure::kSteadyStep, Clock::kWall};  // CPU time of the process tree is far less noisy than wall time
                                                        // on a shared machine; a CUDA job's
  // time is spent on the device, which only wall time sees.
  // An inference job is judged on its requests' latency: its imports and start-up would weigh as much as they.
  if (isInference(first_baseline)) return Metric{Measure::kRequestP50, Clock::kWall};
  return Metric{Measure::kEndToEnd, first_baseline.cuda_used ? Clock::kWall : Clock::kCpu};
}

std::string impactText(const Candidate& candidate) {
  std::string text = candidate.finding;
  if (candidate.impact_fraction >= 0) {
    text += fmt::format("{}{:.1f} % of the run", text.empty() ? "" : ", ", candidate.impact_fraction * 100);
  }
  return text.empty() ? "" : " (" + text + ")";
}

// torch-compile and eager, under the collector: the compiled run's regions against the same regions run
// eagerly. `--fixes eager` has both (the baseline compiles, the fix runs its regions eagerly, still timed);
// `--fixes torch-compile` has no timed region in its eager baseline, so one more run compiles the same modules
// with Dynamo disabled (the fix plus `eager`): the regions' eager time, per call, with the same wrappers.
void measureCompileWorth(Runner& runner, const Arm& arm, const Variant& baseline, FixOutcome& outcome,
                         std::vector<std::string>& notes) {
  const std::string& id = arm.request.id;
  if (!runner.collectorUsed() || !outcome.measured || (id != "torch-compile" && id != "eager")) return;
  if (baseline.runs.empty() || arm.variant.runs.empty()) return;
  std::string compiled = baseline.runs.front().store_path;
  std::string eager = arm.variant.runs.front().store_path;
  if (id == "torch-compile") {
    compiled = eager;
    const Variant timed_eagerly{"torch-compile-eager", arm.variant.runtime_specs + ",eager", baseline.copy_root, {}};
    auto run = runner.run(timed_eagerly, "regions-eager");
    if (!run || run->exit_code != 0) {
      notes.push_back("torch-compile: the run that times its regions eagerly failed (" +
                      (run ? runner.describeFailure(*run) : run.error().message) + "): no per-region comparison");
      return;
    }
    eager = run->store_path;
  }
  auto worth = compileWorth(compiled, eager);
  if (!worth) {
    notes.push_back(id + ": no per-region comparison: " + worth.error().message);
    return;
  }
  outcome.compile_worth = std::move(*worth);
}

// The fixes to measure, as arms with their copies and diffs; the others get their outcome here.
Result<std::vector<Arm>> prepareArms(const std::vector<Candidate>& candidates, const JobLayout& job,
                                     const FixOptions& options, Runner& runner, const Variant& baseline,
                                     const fs::path& temp, FixReport& report) {
  const RunMeasurement& profile = baseline.runs.front();
  const auto executed = executedFiles(profile, baseline.copy_root);
  if (!executed) report.notes.push_back("the job's executed files are unknown: source fixes may edit any of its files");
  std::vector<Arm> arms;
  for (const Candidate& candidate : candidates) {
    const FixRequest& request = candidate.request;
    FixOutcome outcome;
    outcome.id = request.spec();
    outcome.kind = std::string(kindName(request.kind));
    outcome.impact_fraction = candidate.impact_fraction;
    outcome.finding = candidate.finding;
    outcome.status = "not run";
    const std::string cannot_act = whyCannotAct(request, profile, options.shared_compile_cache);
    if (request.kind == FixKind::kAdvice) {
      outcome.status = "advice";
      outcome.reason = "no automatic fix: " + std::string(findFix(request.id)->summary);
    } else if (!cannot_act.empty()) {
      outcome.reason = "cannot act: " + cannot_act;
    } else if (candidate.impact_fraction >= 0 && candidate.impact_fraction < options.min_impact &&
               request.effect != Effect::kFewerGraphBreaks) {
      // A graph break's impact is the compile time it causes; what the split graph costs every step is not in it
      // (docs/rules.md), so it is not held back.
      outcome.reason = fmt::format("its findings cost {:.1f} % of the run, less than --min-impact {:.0f} %: no "
                                   "gain it could bring would be worth the runs",
                                   candidate.impact_fraction * 100, options.min_impact * 100);
    } else if (options.max_fixes > 0 && static_cast<int>(arms.size()) >= options.max_fixes) {
      outcome.reason = fmt::format("not among the {} fixes with the most impact (--max-fixes)", options.max_fixes);
    } else {
      Arm arm{Variant{request.spec(), request.kind == FixKind::kRuntime ? request.spec() : "",
                      request.kind == FixKind::kSource ? temp / ("fix-" + request.id) : baseline.copy_root, {}},
              request, report.fixes.size(), false};
      if (request.kind == FixKind::kSource || request.has_source_form) {
        const fs::path diff_root = request.kind == FixKind::kSource ? arm.variant.copy_root : temp / ("form-" + request.id);
        if (auto copied = copyJobTree(job, diff_root); !copied) return copied.error();
        std::string rewrite_notes;
        auto diff = runner.rewrite(diff_root, {request.spec()}, executed, &rewrite_notes);
        if (!diff) return diff.error();
        outcome.diff = *diff;
        if (request.kind == FixKind::kSource && outcome.diff.empty() && !rewrite_notes.empty()) {
          outcome.reason = "not applicable: " + rewrite_notes;
        }
      }
      if (request.kind == FixKind::kSource && outcome.diff.empty()) {
        outcome.status = "not applicable";
        if (outcome.reason.empty()) {
          outcome.reason = "not applicable: the rewrite changes nothing in the files the job executed";
        }
      } else {
        arms.push_back(std::move(arm));
      }
    }
    if (options.progress) {
      const bool measured = !arms.empty() && arms.back().outcome_index == report.fixes.size();
      options.progress(fmt::format("{} {}{}{}", measured ? "measuring" : outcome.status + ":", outcome.id,
                                   impactText(candidate), measured ? "" : " - " + outcome.reason));
    }
    report.fixes.push_back(std::move(outcome));
  }
  return arms;
}

// The accepted fixes together: runtime fixes in TORCHSCOPE_FIXES, source fixes on one copy (runtime
// fixes alone run the user's own files, as each of them did).
Result<Arm> combinedArm(const JobLayout& job, Runner& runner, const std::vector<Arm>& arms, const Variant& baseline,
                        const fs::path& temp, FixOutcome& outcome) {
  Arm combined{Variant{"combined", "", baseline.copy_root, {}}, FixRequest{}, 0, false};
  outcome.id = "combined";
  outcome.kind = "combined";
  std::vector<std::string> source_specs;
  for (const Arm& arm : arms) {
    outcome.members.push_back(arm.request.spec());
    if (arm.request.kind == FixKind::kSource) {
      source_specs.push_back(arm.request.spec());
    } else {
      combined.variant.runtime_specs += (combined.variant.runtime_specs.empty() ? "" : ",") + arm.request.spec();
    }
  }
  if (!source_specs.empty()) {
    combined.variant.copy_root = temp / "combined";
    if (auto copied = copyJobTree(job, combined.variant.copy_root); !copied) return copied.error();
    auto diff = runner.rewrite(combined.variant.copy_root, source_specs, executedFiles(baseline.runs.front(), baseline.copy_root));
    if (!diff) return diff.error();
    outcome.diff = *diff;
  }
  return combined;
}

// --write: the accepted source fixes, and the source form of accepted runtime fixes that have one,
// applied to the user's files the job executed (each backed up first).
Result<void> writeAccepted(const JobLayout& job, Runner& runner, FixReport& report, const Variant& baseline,
                           const fs::path& temp) {
  std::vector<std::string> specs;
  std::vector<std::string> runtime_only;
  // The combination's members: of the accepted variants of one fix, the one it took.
  const std::vector<std::string> members = report.combined ? fixIdsOf(*report.combined) : std::vector<std::string>{};
  for (const FixOutcome& fix : report.fixes) {
    if (!fix.accepted || std::find(members.begin(), members.end(), fix.id) == members.end()) continue;
    if (fix.kind == "source" || !fix.diff.empty()) {
      specs.push_back(fix.id);
    } else {
      runtime_only.push_back(fix.id);
    }
  }
  if (report.combined && !report.combined->accepted) {
    report.notes.push_back("--write: the accepted fixes were not accepted together; no file written");
    return {};
  }
  if (!runtime_only.empty()) {
    std::string list;
    for (const auto& id : runtime_only) list += (list.empty() ? "" : ",") + id;
    report.notes.push_back("runtime fixes without a source form: run the job under `torchscope run` with " +
                           std::string(base::settings::kFixes.name) + "=" + list + " to keep them");
  }
  if (specs.empty()) {
    report.notes.push_back("--write: no accepted fix changes the job's files; no file written");
    return {};
  }
  const fs::path copy = temp / "write";
  if (auto copied = copyJobTree(job, copy); !copied) return copied.error();
  auto diff = runner.rewrite(copy, specs, executedFiles(baseline.runs.front(), baseline.copy_root));
  if (!diff) return diff.error();
  auto written = writeBack(job, copy);
  if (!written) return written.error();
  for (const auto& file : *written) report.written_files.push_back(file.path + " (backup: " + file.backup + ")");
  return {};
}

}  // namespace

Result<FixReport> runFixExperiment(const FixOptions& options) {
  if (options.repetitions < 2) {
    return makeError(ErrorCode::kInvalidArgument, "--repetitions must be at least 2: an interval needs two runs");
  }
  if (auto pattern = extractParityValues("", options.parity_pattern); !pattern) return pattern.error();
  // A misspelt fix is refused before the profile run, not after it.
  if (auto fixes = parseFixList(options.fixes, options.allow_test_fixes); !fixes) return fixes.error();
  if (options.verdict_metric != "auto") {
    if (auto metric = parseMetric(options.verdict_metric); !metric) return metric.error();
  }
  auto argv = jobCommand(options);
  if (!argv) return argv.error();
  const fs::path cwd = options.job_working_directory.empty() ? fs::current_path() : fs::path(options.job_working_directory);
  auto job = analyzeJob(*argv, cwd);
  if (!job) return job.error();
  auto temp_path = makeTempFolder();
  if (!temp_path) return temp_path.error();
  TempFolder temp{*temp_path, options.keep_temp};

  Runner runner(*job, options, temp.path);
  if (auto ready = runner.preflight(); !ready) return ready.error();
  FixReport report;
  report.command = job->command_line;
  report.repetitions = options.repetitions;
  report.collector_used = runner.collectorUsed();
  report.fix_rule = {2, options.repetitions, options.alpha, options.min_total_gain};
  // The combination is looked at from its first run: the runs of the other variants already
  // measure the noise.
  report.combined_rule = {1, options.repetitions, options.alpha, options.min_total_gain};
  report.parallel_runs = options.parallel_runs;
  if (options.keep_temp) report.notes.push_back("runs kept in " + temp.path.string());
  if (const std::string parallel = runner.parallelismNote(); !parallel.empty()) report.notes.push_back(parallel);
  runner.seedCompileCache();
  if (runner.compileCacheSeeded()) {
    report.notes.push_back("every run compiles into a private cache that holds Inductor's CPU-feature probes and "
                           "none of the job's graphs");
  }

  // The baseline and the runtime fixes run the user's own files (unchanged: the findings name their
  // lines); only source fixes run from private copies.
  Variant baseline{"baseline", "", job->sourceRoot(), {}};

  // The first baseline run is the profile of `fix -- CMD` and the baseline's first sample.
  Rounds rounds(options, runner, report, baseline);
  auto first = rounds.runFirstBaseline();
  if (!first) return first.error();
  if ((*first)->exit_code != 0) {
    return makeError(ErrorCode::kInvalidArgument,
                     fmt::format("the job failed before any fix was applied ({})", runner.describeFailure(**first)));
  }
  const std::string profile_store = (*first)->store_path;
  if (options.on_profiled) options.on_profiled(profile_store);
  auto verdict = verdictMetric(options, **first);
  if (!verdict) return verdict.error();
  rounds.setVerdictMetric(*verdict);
  report.verdict_metric = verdict->name();
  report.steps_source = (*first)->steps_source;
  if ((*first)->ranks > 0) {
    report.notes.push_back(fmt::format(
        "distributed job: every variant re-runs the whole job with the fixes applied in each of its {} ranks; its "
        "steps, compile time and first step are its slowest rank's (rank {} in the first run), parity compares every "
        "rank's values",
        (*first)->ranks, (*first)->slowest_rank));
  }
  report.window_steps = options.window_steps;
  report.window_reached = (*first)->stopped_after_steps > 0;
  if (options.window_steps > 0) {
    report.notes.push_back(
        report.window_reached
            ? fmt::format("--steps {}: every run ended cleanly after {} warm-up step(s) and {} more; end-to-end and "
                          "first-step figures cover that window, not the whole job",
                          options.window_steps, options.warmup_steps, options.window_steps)
            : fmt::format("--steps {}: the job ended before {} steps ({} seen), so every run ran whole and is "
                          "compared end to end",
                          options.window_steps, options.warmup_steps + options.window_steps, (*first)->steps.size()));
  }

  // Without the collector the recorded run's store knows the causes of recompiles, which the launcher does not.
  RunMeasurement profile = **first;
  if (!runner.collectorUsed() && !options.store_path.empty()) (void)readStore(options.store_path, profile);
  const std::string findings_store = options.store_path.empty() ? profile_store : options.store_path;
  auto candidates = chooseCandidates(options, findings_store, profile, report.notes);
  if (!candidates) return candidates.error();
  auto arms = prepareArms(*candidates, *job, options, runner, baseline, temp.path, report);
  if (!arms) return arms.error();

  if (auto measured = rounds.runFixes(*arms); !measured) return measured.error();
  std::vector<const Variant*> all = {&baseline};
  for (const Arm& arm : *arms) all.push_back(&arm.variant);
  report.baseline = summarize(baseline, options.warmup_steps);
  for (const Arm& arm : *arms) {
    FixOutcome& outcome = report.fixes[arm.outcome_index];
    finishOutcome(outcome, arm.variant, baseline, all, options, report.fix_rule, *verdict);
    if (options.progress) options.progress(fmt::format("{}: {} ({})", outcome.id, outcome.status, outcome.reason));
    measureCompileWorth(runner, arm, baseline, outcome, report.notes);
  }

  std::vector<Arm> accepted;
  for (const std::size_t member : combinationMembers(report.fixes, report.notes)) {
    accepted.push_back(
        *std::find_if(arms->begin(), arms->end(), [&](const Arm& arm) { return arm.outcome_index == member; }));
  }
  if (accepted.size() == 1) {
    report.combined = report.fixes[accepted.front().outcome_index];
    report.combined->members = {report.combined->id};
    report.combined->id = "combined";
    report.combined->kind = "combined";
  } else if (accepted.size() > 1) {
    FixOutcome outcome;
    auto combined = combinedArm(*job, runner, accepted, baseline, temp.path, outcome);
    if (!combined) return combined.error();
    if (auto measured = rounds.runCombined(*combined, outcome, *arms); !measured) return measured.error();
    all.push_back(&combined->variant);
    finishOutcome(outcome, combined->variant, baseline, all, options, report.combined_rule, *verdict);
    report.combined = std::move(outcome);
    if (options.progress) options.progress(fmt::format("combined: {} ({})", report.combined->status, report.combined->reason));
  }
  if (options.write) {
    if (auto written = writeAccepted(*job, runner, report, baseline, temp.path); !written) return written.error();
  }
  return report;
}

}  // namespace torchscope::compiler
