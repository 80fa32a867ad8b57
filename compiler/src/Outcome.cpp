#include "Outcome.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "Rounds.h"
#include "torchscope/compiler/FixCatalog.h"

namespace torchscope::compiler {
namespace {

std::string intervalOrEstimate(const SpeedupInterval& interval) {
  if (!interval.valid()) return fmt::format("{:.3f}x (no interval)", interval.estimate);
  return fmt::format("{:.3f}x [{:.3f}, {:.3f}]", interval.estimate, interval.ci_low, interval.ci_high);
}

// The figures beside an inference job's verdict: p50, p99 and throughput, each with its interval.
std::string requestFigures(const VariantStats& stats) {
  std::string text;
  for (const auto& [name, label] : {std::pair{"request_p50_wall", "p50"}, std::pair{"request_p99_wall", "p99"},
                                    std::pair{"request_mean_wall", "throughput"}}) {
    const auto found = stats.metrics.find(name);
    if (found == stats.metrics.end() || found->second.speedup.estimate <= 0) continue;
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", label, intervalOrEstimate(found->second.speedup));
  }
  return text.empty() ? "" : "; per request: " + text;
}

// Where the fix's time goes (compile vs steady state) and the run length at which it pays off, beside
// every timed verdict; an end-to-end gain bought with slower steps is never a plain "faster".
void notePayoff(FixOutcome& outcome, const VariantStats& baseline, const Metric& verdict, double min_gain) {
  outcome.payoff = payoffOf(baseline, outcome.stats, verdict.clock);
  if (outcome.payoff.when == "below" || outcome.payoff.when == "above") outcome.break_even_steps = outcome.payoff.steps;
  const bool timed =
      outcome.stats.failed_runs == 0 && outcome.parity.ok && !(outcome.effect.checkable && !outcome.effect.shown);
  if (!timed || !outcome.payoff.known()) return;
  constexpr std::string_view kFaster = "faster: ";
  if (outcome.accepted && outcome.payoff.stepsSlower(min_gain) && outcome.reason.rfind(kFaster, 0) == 0) {
    const bool decided = outcome.payoff.step_speedup.valid() && outcome.payoff.step_speedup.ci_high < 1.0;
    outcome.reason = (decided ? "faster over this run only, its steady-state steps are slower: "
                              : "faster over this run, but its steady-state steps may be slower: ") +
                     outcome.reason.substr(kFaster.size());
  }
  outcome.reason += "; " + outcome.payoff.text();
}

}  // namespace

std::string notApplicableReason(const RunMeasurement& run, const std::vector<std::string>& fix_ids) {
  for (const std::string& spec : fix_ids) {
    const auto found = run.not_applicable.find(spec.substr(0, spec.find(':')));
    if (found != run.not_applicable.end()) return found->first + ": " + found->second;
  }
  return "";
}

std::vector<std::string> fixIdsOf(const FixOutcome& outcome) {
  return outcome.members.empty() ? std::vector<std::string>{outcome.id} : outcome.members;
}

// Candidate run i against baseline run i (the job runs with the same seeds, so any baseline run
// is a reference; the last one stands in when the candidate ran more often).
ParityResult parityOver(const Variant& baseline, const Variant& candidate, const std::vector<std::string>& fix_ids,
                        double tolerance, std::optional<std::size_t> only) {
  const auto pick = [&](std::size_t i) { return std::min(i, baseline.runs.size() - 1); };
  std::vector<std::size_t> runs;
  for (std::size_t i = 0; i < candidate.runs.size(); ++i) {
    if (!only || *only == i) runs.push_back(i);
  }
  if (baseline.runs.empty()) return compareParity({}, {}, tolerance);
  const bool outputs = std::any_of(baseline.runs.begin(), baseline.runs.end(),
                                   [](const RunMeasurement& run) { return !run.outputs.empty(); });
  if (outputs) {
    std::vector<std::vector<RequestOutput>> reference;
    std::vector<std::vector<RequestOutput>> kept;
    for (const std::size_t i : runs) {
      reference.push_back(baseline.runs[pick(i)].outputs);
      kept.push_back(candidate.runs[i].outputs);
    }
    std::vector<std::vector<RequestOutput>> noise;
    for (const RunMeasurement& run : baseline.runs) {
      if (run.exit_code == 0 && noise.size() < 2) noise.push_back(run.outputs);
    }
    return compareOutputs(reference, kept, outputTolerance(fix_ids), noise);
  }
  std::vector<std::vector<double>> reference;
  std::vector<std::vector<double>> values;
  for (const std::size_t i : runs) {
    reference.push_back(baseline.runs[pick(i)].parity_values);
    values.push_back(candidate.runs[i].parity_values);
  }
  return compareParity(reference, values, tolerance);
}

void decide(FixOutcome& outcome, const SequentialRule& rule, const std::string& verdict_title) {
  outcome.accepted = false;
  outcome.status = "rejected";
  if (outcome.stats.failed_runs > 0) {
    outcome.reason = fmt::format("failed: {} of its runs exited with an error ({})", outcome.stats.failed_runs,
                                 outcome.stats.failure);
    return;
  }
  if (!outcome.parity.ok) {
    outcome.reason = outcome.parity.reason;
    return;
  }
  if (outcome.effect.checkable && !outcome.effect.shown) {
    outcome.status = "no effect";
    outcome.reason = "no effect in its first run (" + outcome.effect.text + "): not run again";
    return;
  }
  const std::string measured =
      fmt::format("{} {} ({:.1f} % interval, {} runs){}", verdict_title, intervalOrEstimate(outcome.verdict),
                  outcome.verdict.confidence * 100, outcome.stats.runs, requestFigures(outcome.stats));
  switch (judge(outcome.verdict, outcome.stats.runs, rule)) {
    case Judgement::kFaster:
      if (!outcome.parity.comparable) {
        outcome.reason = "faster, but not accepted on speed alone: " + outcome.parity.reason + "; " + measured;
        return;
      }
      outcome.accepted = true;
      outcome.status = "accepted";
      outcome.reason = "faster: " + measured;
      break;
    case Judgement::kSlower: outcome.reason = "slower: " + measured; return;
    case Judgement::kNoChange:
    case Judgement::kUndecided: outcome.reason = "no measurable change: " + measured; return;
  }
  if (outcome.effect.checkable) outcome.reason += "; " + outcome.effect.text;
  if (outcome.parity.checked && outcome.parity.basis == "outputs") {
    outcome.reason += fmt::format("; outputs kept within {} (max rel. diff {:.2g}, max abs. diff {:.2g}{})",
                                  outcome.parity.tolerance, outcome.parity.max_rel_diff, outcome.parity.max_abs_diff,
                                  outcome.parity.top1_agreement >= 0
                                      ? fmt::format(", top-1 agreement {:.1f} %", outcome.parity.top1_agreement * 100)
                                      : "");
  } else if (outcome.parity.checked) {
    outcome.reason += fmt::format("; parity kept (max rel. diff {:.2g})", outcome.parity.max_rel_diff);
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
  outcome.status = "rejected";
  outcome.reason = fmt::format("too costly in memory: {} but peak {} grows {:+.1f} % ({:.1f} -> {:.1f} MiB), above "
                               "--max-memory-increase {:.0f} %",
                               outcome.reason, outcome.memory.basis == "gpu_reserved" ? "GPU reserved memory" : "host RSS",
                               outcome.memory.increase * 100, static_cast<double>(outcome.memory.baseline_bytes) / (1 << 20),
                               static_cast<double>(outcome.memory.candidate_bytes) / (1 << 20), max_increase * 100);
}

void finishOutcome(FixOutcome& outcome, const Variant& candidate, const Variant& baseline,
                   const std::vector<const Variant*>& all, const FixOptions& options, const SequentialRule& rule,
                   const Metric& verdict) {
  outcome.measured = true;
  outcome.stats = summarize(candidate, options.warmup_steps);
  const VariantStats base = summarize(baseline, options.warmup_steps);
  for (const Metric& metric : allMetrics()) {
    std::vector<std::vector<double>> groups;
    for (const Variant* variant : all) groups.push_back(metricRuns(*variant, metric, options.warmup_steps));
    const auto candidate_runs = metricRuns(candidate, metric, options.warmup_steps);
    if (candidate_runs.empty()) continue;
    outcome.stats.metrics[metric.name()].speedup = speedupInterval(
        metricRuns(baseline, metric, options.warmup_steps), candidate_runs, pooledLogNoise(groups), 0.95);
  }
  const auto interval = [&](const char* name) {
    const auto found = outcome.stats.metrics.find(name);
    return found == outcome.stats.metrics.end() ? SpeedupInterval{} : found->second.speedup;
  };
  outcome.speedup = interval("steady_step_wall");
  outcome.total_speedup = interval("end_to_end_wall").estimate;
  outcome.compile_time_delta_s = outcome.stats.compile_time_s - base.compile_time_s;
  outcome.parity = parityOver(baseline, candidate, fixIdsOf(outcome), options.parity_tolerance);
  outcome.memory = memoryChange(base, outcome.stats);
  if (!candidate.runs.empty()) {
    if (const std::string reason = notApplicableReason(candidate.runs.front(), fixIdsOf(outcome)); !reason.empty()) {
      outcome.accepted = false;
      outcome.status = "not applicable";
      outcome.reason = "not applicable: " + reason;
      return;
    }
  }
  decide(outcome, rule, verdict.title());
  notePayoff(outcome, base, verdict, rule.min_gain);
  limitMemory(outcome, options.max_memory_increase);
}

std::vector<std::size_t> combinationMembers(const std::vector<FixOutcome>& fixes, std::vector<std::string>& notes) {
  std::vector<std::size_t> members;
  const auto fix_id = [](const FixOutcome& outcome) { return outcome.id.substr(0, outcome.id.find(':')); };
  for (std::size_t i = 0; i < fixes.size(); ++i) {
    const FixOutcome& candidate = fixes[i];
    if (!candidate.accepted) continue;
    const FixSpec* spec = findFix(fix_id(candidate));
    const auto same_fix = std::find_if(members.begin(), members.end(), [&](std::size_t member) {
      return spec != nullptr && spec->arg_picks_variant && fix_id(fixes[member]) == fix_id(candidate);
    });
    if (same_fix == members.end()) {
      members.push_back(i);
      continue;
    }
    const FixOutcome& held = fixes[*same_fix];
    const bool better = candidate.verdict.estimate > held.verdict.estimate;
    const FixOutcome& winner = better ? candidate : held;
    const FixOutcome& loser = better ? held : candidate;
    notes.push_back(fmt::format(
        "{} and {} are variants of one fix and cannot act together: the combination takes {} ({:.3f}x against "
        "{:.3f}x)",
        winner.id, loser.id, winner.id, winner.verdict.estimate, loser.verdict.estimate));
    if (better) *same_fix = i;
  }
  return members;
}

}  // namespace torchscope::compiler
