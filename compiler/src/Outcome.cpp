#include "Outcome.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "Rounds.h"

namespace torchscope::compiler {
namespace {

std::string intervalOrEstimate(const SpeedupInterval& interval) {
  if (!interval.valid()) return fmt::format("{:.3f}x (no interval)", interval.estimate);
  return fmt::format("{:.3f}x [{:.3f}, {:.3f}]", interval.estimate, interval.ci_low, interval.ci_high);
}

// Candidate run i against baseline run i (the job runs with the same seeds, so any baseline run
// is a reference; the last one stands in when the candidate ran more often).
ParityResult parityOver(const Variant& baseline, const Variant& candidate, double tolerance) {
  std::vector<std::vector<double>> reference;
  const auto values = parityValues(baseline);
  for (std::size_t i = 0; i < candidate.runs.size() && !values.empty(); ++i) {
    reference.push_back(values[std::min(i, values.size() - 1)]);
  }
  return compareParity(reference, parityValues(candidate), tolerance);
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
  const std::string measured = fmt::format("{} {} ({:.1f} % interval, {} runs)", verdict_title,
                                           intervalOrEstimate(outcome.verdict), outcome.verdict.confidence * 100,
                                           outcome.stats.runs);
  switch (judge(outcome.verdict, outcome.stats.runs, rule)) {
    case Judgement::kFaster:
      outcome.accepted = true;
      outcome.status = "accepted";
      outcome.reason = "faster: " + measured;
      break;
    case Judgement::kSlower: outcome.reason = "slower: " + measured; return;
    case Judgement::kNoChange:
    case Judgement::kUndecided: outcome.reason = "no measurable change: " + measured; return;
  }
  if (outcome.effect.checkable) outcome.reason += "; " + outcome.effect.text;
  if (outcome.parity.checked) {
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
  outcome.parity = parityOver(baseline, candidate, options.parity_tolerance);
  outcome.memory = memoryChange(base, outcome.stats);
  decide(outcome, rule, verdict.title());
  notePayoff(outcome, base, verdict, rule.min_gain);
  limitMemory(outcome, options.max_memory_increase);
}

}  // namespace torchscope::compiler
