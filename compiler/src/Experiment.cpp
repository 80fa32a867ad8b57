#include "torchscope/compiler/Experiment.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "Candidates.h"
#include "Runner.h"
#include "torchscope/compiler/Measurement.h"
#include "torchscope/compiler/Process.h"
#include "torchscope/compiler/Workspace.h"
#include "torchscope/store/Reader.h"

namespace torchscope::compiler {
namespace fs = std::filesystem;

void decide(FixOutcome& outcome, double min_total_gain) {
  outcome.accepted = false;
  if (outcome.stats.failed_runs > 0) {
    outcome.reason = fmt::format("failed: {} of its runs exited with an error", outcome.stats.failed_runs);
    return;
  }
  if (!outcome.parity.ok) {
    outcome.reason = outcome.parity.reason;
    return;
  }
  const bool step_faster = outcome.speedup.valid() && outcome.speedup.ci_low > 1.0;
  const bool step_slower = outcome.speedup.valid() && outcome.speedup.ci_high < 1.0;
  const bool total_faster = outcome.total_speedup >= 1.0 + min_total_gain;
  const bool total_slower = outcome.total_speedup > 0 && outcome.total_speedup < 1.0 - min_total_gain;
  if (step_slower || total_slower) {
    outcome.reason = fmt::format("slower: step speed-up {:.3f}x [{:.3f}, {:.3f}], total {:.3f}x",
                                 outcome.speedup.median, outcome.speedup.ci_low, outcome.speedup.ci_high,
                                 outcome.total_speedup);
    return;
  }
  if (!step_faster && !total_faster) {
    outcome.reason = fmt::format("no measurable gain: step speed-up {:.3f}x [{:.3f}, {:.3f}], total {:.3f}x",
                                 outcome.speedup.median, outcome.speedup.ci_low, outcome.speedup.ci_high,
                                 outcome.total_speedup);
    return;
  }
  outcome.accepted = true;
  outcome.reason = step_faster ? "faster steady state" : "faster end to end";
  if (outcome.parity.checked) {
    outcome.reason += fmt::format(", parity kept (max rel. diff {:.2g})", outcome.parity.max_rel_diff);
  } else {
    outcome.reason += "; " + outcome.parity.reason;
  }
}

MemoryChange memoryChange(const VariantStats& baseline, const VariantStats& candidate) {
  MemoryChange change;
  if (baseline.gpu_peak_reserved_bytes > 0 && candidate.gpu_peak_reserved_bytes >= 0) {
    change.basis = "gpu_reserved";
    change.baseline_bytes = baseline.gpu_peak_reserved_bytes;
    change.candidate_bytes = candidate.gpu_peak_reserved_bytes;
  } else if (baseline.peak_rss_bytes > 0 && candidate.peak_rss_bytes >= 0) {
    change.basis = "host_rss";
    change.baseline_bytes = baseline.peak_rss_bytes;
    change.candidate_bytes = candidate.peak_rss_bytes;
  } else {
    return change;
  }
  change.increase = static_cast<double>(change.candidate_bytes - change.baseline_bytes) /
                    static_cast<double>(change.baseline_bytes);
  return change;
}

void limitMemory(FixOutcome& outcome, double max_increase) {
  if (!outcome.accepted || !outcome.memory.known() || outcome.memory.increase <= max_increase) return;
  outcome.accepted = false;
  outcome.reason = fmt::format("too costly in memory: {} but peak {} grows {:+.1f} % ({:.1f} -> {:.1f} MiB), above "
                               "--max-memory-increase {:.0f} %",
                               outcome.reason, outcome.memory.basis == "gpu_reserved" ? "GPU reserved memory" : "host RSS",
                               outcome.memory.increase * 100, static_cast<double>(outcome.memory.baseline_bytes) / (1 << 20),
                               static_cast<double>(outcome.memory.candidate_bytes) / (1 << 20), max_increase * 100);
}

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

std::string joinCommand(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) {
    if (!text.empty()) text += ' ';
    text += word.find_first_of(" \t'\"") == std::string::npos ? word : "'" + word + "'";
  }
  return text;
}

void finishOutcome(FixOutcome& outcome, const Variant& baseline, const Variant& candidate, const FixOptions& options) {
  outcome.measured = true;
  outcome.stats = summarize(candidate, options.warmup_steps);
  const VariantStats base = summarize(baseline, options.warmup_steps);
  outcome.speedup = bootstrapSpeedup(steadySteps(baseline, options.warmup_steps),
                                     steadySteps(candidate, options.warmup_steps));
  outcome.total_speedup = outcome.stats.total_time_s > 0 ? base.total_time_s / outcome.stats.total_time_s : 0;
  outcome.compile_time_delta_s = outcome.stats.compile_time_s - base.compile_time_s;
  outcome.parity = compareParity(parityValues(baseline), parityValues(candidate), options.parity_tolerance);
  outcome.memory = memoryChange(base, outcome.stats);
  decide(outcome, options.min_total_gain);
  limitMemory(outcome, options.max_memory_increase);
}


// The accepted fixes together, measured against fresh baseline runs interleaved with them.
Result<FixOutcome> measureCombined(const JobLayout& job, const FixOptions& options, Runner& runner,
                                   const Variant& baseline, const std::vector<Variant>& candidates,
                                   const FixReport& report, const fs::path& temp) {
  Variant combined{"combined", "", temp / "combined", {}};
  if (auto copied = copyJobTree(job, combined.copy_root); !copied) return copied.error();
  FixOutcome outcome;
  outcome.id = "combined";
  outcome.kind = "combined";
  std::vector<std::string> source_specs;
  for (const Variant& candidate : candidates) {
    const FixOutcome& fix = report.fixes[candidate.outcome_index];
    if (!fix.accepted) continue;
    outcome.members.push_back(fix.id);
    if (fix.kind == "source") {
      source_specs.push_back(fix.id);
    } else {
      combined.runtime_specs += (combined.runtime_specs.empty() ? "" : ",") + fix.id;
    }
  }
  if (!source_specs.empty()) {
    auto diff = runner.rewrite(combined.copy_root, source_specs);
    if (!diff) return diff.error();
    outcome.diff = *diff;
  }
  Variant fresh_baseline{"baseline", "", baseline.copy_root, {}};
  for (int rep = 1; rep <= options.repetitions; ++rep) {
    for (Variant* variant : {&fresh_baseline, &combined}) {
      auto measured = runner.run(*variant, fmt::format("{}-combined-{}", variant->name, rep));
      if (!measured) return measured.error();
      if (options.progress) {
        options.progress(fmt::format("[combined {}/{}] {}: {:.2f} s", rep, options.repetitions, variant->name, measured->wall_s));
      }
      variant->runs.push_back(std::move(*measured));
    }
  }
  finishOutcome(outcome, fresh_baseline, combined, options);
  return outcome;
}

// --write: the accepted source fixes, and the source form of accepted runtime fixes that have one,
// applied to the user's files (each backed up first).
Result<void> writeAccepted(const JobLayout& job, Runner& runner, FixReport& report, const fs::path& temp) {
  std::vector<std::string> specs;
  std::vector<std::string> runtime_only;
  for (const FixOutcome& fix : report.fixes) {
    if (!fix.accepted) continue;
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
    report.notes.push_back("runtime fixes without a source form: run the job with TORCHSCOPE_FIXES=" + list +
                           " (PYTHONPATH including compiler/python) to keep them");
  }
  if (specs.empty()) {
    report.notes.push_back("--write: no accepted fix changes the job's files; no file written");
    return {};
  }
  const fs::path copy = temp / "write";
  if (auto copied = copyJobTree(job, copy); !copied) return copied.error();
  auto diff = runner.rewrite(copy, specs);
  if (!diff) return diff.error();
  auto written = writeBack(job, copy);
  if (!written) return written.error();
  for (const auto& file : *written) report.written_files.push_back(file.path + " (backup: " + file.backup + ")");
  return {};
}

}  // namespace

Result<FixReport> runFixExperiment(const FixOptions& options) {
  if (options.repetitions < 1) return makeError(ErrorCode::kInvalidArgument, "--repetitions must be at least 1");
  if (auto pattern = extractParityValues("", options.parity_pattern); !pattern) return pattern.error();
  auto argv = jobCommand(options);
  if (!argv) return argv.error();
  const fs::path cwd = options.job_working_directory.empty() ? fs::current_path() : fs::path(options.job_working_directory);
  auto job = analyzeJob(*argv, cwd);
  if (!job) return job.error();
  auto temp_path = makeTempFolder();
  if (!temp_path) return temp_path.error();
  TempFolder temp{*temp_path, options.keep_temp};
  const auto progress = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };

  Runner runner(*job, options, temp.path);
  FixReport report;
  report.command = joinCommand(*argv);
  report.repetitions = options.repetitions;
  report.collector_used = runner.collectorUsed();
  if (options.keep_temp) report.notes.push_back("runs kept in " + temp.path.string());

  Variant baseline{"baseline", "", temp.path / "baseline", {}};
  if (auto copied = copyJobTree(*job, baseline.copy_root); !copied) return copied.error();

  // `fix -- cmd` without --fixes profiles once and takes its findings from that run.
  std::string findings_store = options.store_path;
  RunMeasurement profile;
  if (options.fixes.empty() && options.store_path.empty()) {
    progress("profiling the job once");
    auto profiled = runner.run(baseline, "profile");
    if (!profiled) return profiled.error();
    if (profiled->exit_code != 0) {
      return makeError(ErrorCode::kInvalidArgument,
                       fmt::format("the job failed (exit {}) before any fix was applied; see {}", profiled->exit_code,
                                   runner.lastStderrPath()));
    }
    profile = std::move(*profiled);
    if (findings_store.empty() && runner.collectorUsed()) findings_store = runner.lastStorePath();
  } else if (!options.store_path.empty()) {
    (void)readStore(options.store_path, profile);  // the recorded run stands in for the profile
  }

  auto requests = chooseCandidates(options, findings_store, profile, report.notes);
  if (!requests) return requests.error();

  std::vector<Variant> candidates;
  for (const FixRequest& request : *requests) {
    FixOutcome outcome;
    outcome.id = request.spec();
    outcome.kind = std::string(kindName(request.kind));
    if (request.kind == FixKind::kAdvice) {
      outcome.reason = "no automatic fix: " + std::string(findFix(request.id)->summary);
      report.fixes.push_back(std::move(outcome));
      continue;
    }
    Variant variant{request.spec(), request.kind == FixKind::kRuntime ? request.spec() : "",
                    request.kind == FixKind::kSource ? temp.path / ("fix-" + request.id) : baseline.copy_root, {}};
    if (request.kind == FixKind::kSource || request.has_source_form) {
      const fs::path diff_root = request.kind == FixKind::kSource ? variant.copy_root : temp.path / ("form-" + request.id);
      if (auto copied = copyJobTree(*job, diff_root); !copied) return copied.error();
      auto diff = runner.rewrite(diff_root, {request.spec()});
      if (!diff) return diff.error();
      outcome.diff = *diff;
      if (request.kind == FixKind::kSource && outcome.diff.empty()) {
        outcome.reason = "not applicable: the rewrite changes nothing in the job's files";
        report.fixes.push_back(std::move(outcome));
        continue;
      }
    }
    variant.outcome_index = report.fixes.size();
    report.fixes.push_back(std::move(outcome));
    candidates.push_back(std::move(variant));
  }

  std::vector<Variant*> round = {&baseline};
  for (Variant& candidate : candidates) round.push_back(&candidate);
  const std::size_t total_runs = static_cast<std::size_t>(options.repetitions) * round.size();
  std::size_t done = 0;
  for (int rep = 1; rep <= options.repetitions; ++rep) {
    for (Variant* variant : round) {
      auto measured = runner.run(*variant, fmt::format("{}-{}", variant->name, rep));
      if (!measured) return measured.error();
      progress(fmt::format("[{}/{}] repetition {}/{} {}: {:.2f} s{}", ++done, total_runs, rep, options.repetitions,
                           variant->name, measured->wall_s,
                           measured->exit_code == 0 ? "" : fmt::format(" (exit {})", measured->exit_code)));
      variant->runs.push_back(std::move(*measured));
    }
  }
  report.baseline = summarize(baseline, options.warmup_steps);
  if (report.baseline.failed_runs > 0) {
    return makeError(ErrorCode::kInvalidArgument, "the baseline job failed in a repetition; see " + runner.lastStderrPath());
  }
  report.steps_source = baseline.runs.empty() ? "" : baseline.runs.front().steps_source;
  for (const Variant& candidate : candidates) {
    FixOutcome& outcome = report.fixes[candidate.outcome_index];
    finishOutcome(outcome, baseline, candidate, options);
    progress(fmt::format("{}: {} ({})", outcome.id, outcome.accepted ? "accepted" : "rejected", outcome.reason));
  }

  // The accepted fixes together, measured against fresh baseline runs.
  std::vector<const Variant*> accepted;
  for (const Variant& candidate : candidates) {
    if (report.fixes[candidate.outcome_index].accepted) accepted.push_back(&candidate);
  }
  if (accepted.size() == 1) {
    report.combined = report.fixes[accepted.front()->outcome_index];
    report.combined->members = {report.combined->id};
    report.combined->id = "combined";
    report.combined->kind = "combined";
  } else if (accepted.size() > 1) {
    auto combined = measureCombined(*job, options, runner, baseline, candidates, report, temp.path);
    if (!combined) return combined.error();
    report.combined = std::move(*combined);
    progress(fmt::format("combined: {} ({})", report.combined->accepted ? "accepted" : "rejected", report.combined->reason));
  }
  if (options.write) {
    if (auto written = writeAccepted(*job, runner, report, temp.path); !written) return written.error();
  }
  return report;
}

}  // namespace torchscope::compiler
