#include "Rounds.h"

#include "Outcome.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <future>

namespace torchscope::compiler {
namespace {

double meanWall(const Variant& variant, double fallback) {
  if (variant.runs.empty()) return fallback;
  double sum = 0;
  for (const auto& run : variant.runs) sum += run.wall_s;
  return sum / static_cast<double>(variant.runs.size());
}

std::string duration(double seconds) {
  const auto whole = static_cast<long>(std::lround(std::max(seconds, 0.0)));
  return whole >= 60 ? fmt::format("{}m{:02d}s", whole / 60, whole % 60) : fmt::format("{}s", whole);
}

std::string intervalWithConfidence(const SpeedupInterval& interval) {
  return fmt::format("{:.3f}x [{:.3f}, {:.3f}] ({:.1f} % interval)", interval.estimate, interval.ci_low,
                     interval.ci_high, interval.confidence * 100);
}

}  // namespace

std::vector<double> metricRuns(const Variant& variant, const Metric& metric, int warmup_steps) {
  std::vector<double> values;
  for (const auto& run : variant.runs) {
    if (run.exit_code != 0) continue;
    const double value = metricValue(run, metric, warmup_steps);
    if (value > 0) values.push_back(value);
  }
  return values;
}

Rounds::Rounds(const FixOptions& options, Runner& runner, FixReport& report, Variant& baseline)
    : options_(options), runner_(runner), report_(report), baseline_(baseline) {}

Result<const RunMeasurement*> Rounds::runFirstBaseline() {
  round_ = 1;
  // Any measurement needs a second baseline run: beside the first, it costs no wall time.
  std::vector<PlannedRun> plan = {{&baseline_, "baseline-1"}};
  if (options_.parallel_runs > 1) plan.push_back({&baseline_, "baseline-2"});
  if (auto ran = runWaves(plan); !ran) return ran.error();
  if (baseline_.runs.front().exit_code == 0 && baseline_.runs.back().exit_code != 0) {
    return makeError(ErrorCode::kInvalidArgument, fmt::format("the baseline job failed in its second run ({})",
                                                              runner_.describeFailure(baseline_.runs.back())));
  }
  return &baseline_.runs.front();
}

Result<void> Rounds::runWaves(const std::vector<PlannedRun>& plan) {
  const auto width = static_cast<std::size_t>(std::max(options_.parallel_runs, 1));
  for (std::size_t begin = 0; begin < plan.size(); begin += width) {
    const std::size_t end = std::min(begin + width, plan.size());
    std::vector<std::future<Result<RunMeasurement>>> wave;
    for (std::size_t index = begin; index < end; ++index) {
      const int slot = static_cast<int>(index - begin);
      wave.push_back(std::async(std::launch::async, [this, &planned = plan[index], slot] {
        return runner_.run(*planned.variant, planned.label, slot);
      }));
    }
    // Every run of the wave finishes before the first error is returned (the futures wait for them).
    for (std::size_t index = begin; index < end; ++index) {
      auto measured = wave[index - begin].get();
      if (!measured) return measured.error();
      Variant& variant = *plan[index].variant;
      variant.runs.push_back(std::move(*measured));
      ++report_.runs;
      reportRun(variant, variant.runs.back(), fmt::format("run {}", variant.runs.size()));
    }
  }
  return {};
}

void Rounds::reportRun(const Variant& variant, const RunMeasurement& run, const std::string& tally) {
  if (!options_.progress) return;
  const std::string left = arms_ == nullptr ? "" : " | " + timeLeft();  // nothing to estimate before the fixes are chosen
  options_.progress(fmt::format("[{}] {} {}: {:.1f} s wall, {:.1f} s CPU{}{}", report_.runs, variant.name, tally,
                                run.wall_s, run.cpu_s,
                                run.exit_code == 0 ? "" : fmt::format(" (exit {})", run.exit_code), left));
}

std::string Rounds::timeLeft() const {
  const double base = meanWall(baseline_, 0);
  double expected = 0;
  double worst = 0;
  int candidates_for_combination = 0;
  double fastest = base;
  if (arms_ != nullptr) {
    // Each active arm needs min_runs (at most max_runs) of its own; a round of the baseline runs
    // beside the arms until it has as many runs as the longest of them.
    int expected_rounds = 0;
    int worst_rounds = 0;
    for (const Arm& arm : *arms_) {
      const double cost = meanWall(arm.variant, base);
      const int runs = static_cast<int>(arm.variant.runs.size());
      const auto judgement = report_.fixes[arm.outcome_index].verdict;
      if (!arm.stopped || judge(judgement, runs, report_.fix_rule) == Judgement::kFaster) {
        ++candidates_for_combination;
        fastest = std::min(fastest, cost);
      }
      if (arm.stopped) continue;
      const int at_least = std::max(report_.fix_rule.min_runs - runs, 0);
      const int at_most = std::max(report_.fix_rule.max_runs - runs, 0);
      expected += at_least * cost;
      worst += at_most * cost;
      expected_rounds = std::max(expected_rounds, runs + at_least);
      worst_rounds = std::max(worst_rounds, runs + at_most);
    }
    const int baseline_runs = static_cast<int>(baseline_.runs.size());
    expected += std::max(expected_rounds - baseline_runs, 0) * base;
    worst += std::max(worst_rounds - baseline_runs, 0) * base;
  }
  if (combined_ != nullptr) {
    const int done = static_cast<int>(combined_->variant.runs.size());
    const double cost = meanWall(combined_->variant, fastest);
    if (!combined_->stopped) {
      expected += std::max(report_.combined_rule.min_runs - done, 0) * cost;
      worst += std::max(report_.combined_rule.max_runs - done, 0) * cost;
    }
  } else if (candidates_for_combination >= 2) {
    expected += report_.combined_rule.min_runs * fastest;
    worst += report_.combined_rule.max_runs * fastest;
  }
  if (worst <= 0) return "measuring done";
  const double parallel = std::max(options_.parallel_runs, 1);
  return fmt::format("~{} left, at most {}", duration(expected / parallel), duration(worst / parallel));
}

SpeedupInterval Rounds::verdictInterval(const Variant& candidate, const std::vector<const Variant*>& all,
                                        double confidence) const {
  std::vector<std::vector<double>> groups;
  for (const Variant* variant : all) groups.push_back(metricRuns(*variant, verdict_, options_.warmup_steps));
  return speedupInterval(metricRuns(baseline_, verdict_, options_.warmup_steps),
                         metricRuns(candidate, verdict_, options_.warmup_steps), pooledLogNoise(groups), confidence);
}

bool Rounds::checkRun(Arm& arm, FixOutcome& outcome, std::size_t index) {
  const RunMeasurement& run = arm.variant.runs[index];
  if (run.exit_code != 0 || !notApplicableReason(run, fixIdsOf(outcome)).empty()) return true;
  // Outputs are judged against the baseline's own run-to-run noise once it ran twice (finishOutcome).
  const ParityResult parity = parityOver(baseline_, arm.variant, fixIdsOf(outcome), options_.parity_tolerance, index);
  if (!parity.ok && (parity.basis != "outputs" || baseline_.runs.size() >= 2)) return true;
  if (index == 0) {
    outcome.effect = checkEffect(arm.request, baseline_.runs.front(), run, options_.min_total_gain);
    if (outcome.effect.checkable && !outcome.effect.shown) return true;
  }
  return false;
}

Result<void> Rounds::runFixes(std::vector<Arm>& arms) {
  arms_ = &arms;
  std::vector<const Variant*> all = {&baseline_};
  for (const Arm& arm : arms) all.push_back(&arm.variant);
  const auto active = [&] { return std::any_of(arms.begin(), arms.end(), [](const Arm& arm) { return !arm.stopped; }); };
  const auto width = static_cast<std::size_t>(std::max(options_.parallel_runs, 1));
  for (round_ = 1; active(); ++round_) {
    std::vector<PlannedRun> plan;
    const bool new_baseline = static_cast<int>(baseline_.runs.size()) < round_;
    if (new_baseline) plan.push_back({&baseline_, fmt::format("baseline-{}", round_)});
    // A run planned per active arm that has fewer than round_ runs, then the wave's free slots
    // filled with the arms' next runs: a slot left idle costs as much wall time as a run.
    std::vector<std::pair<Arm*, std::size_t>> running;  // arm, its runs before this round
    std::vector<int> planned(arms.size(), 0);
    for (std::size_t index = 0; index < arms.size(); ++index) {
      Arm& arm = arms[index];
      planned[index] = static_cast<int>(arm.variant.runs.size());
      if (arm.stopped) continue;
      running.emplace_back(&arm, arm.variant.runs.size());
      if (planned[index] >= round_) continue;
      plan.push_back({&arm.variant, fmt::format("{}-{}", arm.request.id, ++planned[index])});
    }
    for (bool filled = true; filled && plan.size() % width != 0;) {
      filled = false;
      for (std::size_t index = 0; index < arms.size() && plan.size() % width != 0; ++index) {
        if (arms[index].stopped || planned[index] >= report_.fix_rule.max_runs) continue;
        plan.push_back({&arms[index].variant, fmt::format("{}-{}", arms[index].request.id, ++planned[index])});
        filled = true;
      }
    }
    if (plan.empty()) continue;  // every arm ran this round's run ahead in an earlier wave
    if (auto ran = runWaves(plan); !ran) return ran.error();
    if (new_baseline && baseline_.runs.back().exit_code != 0) {
      return makeError(ErrorCode::kInvalidArgument, fmt::format("the baseline job failed in round {} ({})", round_,
                                                                runner_.describeFailure(baseline_.runs.back())));
    }
    for (auto& [arm, before] : running) {
      for (std::size_t index = before; index < arm->variant.runs.size(); ++index) {
        if (!checkRun(*arm, report_.fixes[arm->outcome_index], index)) continue;
        arm->stopped = true;
        if (options_.progress) options_.progress(fmt::format("{}: stopped after its run {}", arm->variant.name, index + 1));
        break;
      }
    }
    for (Arm& arm : arms) {
      const int runs = static_cast<int>(arm.variant.runs.size());
      if (arm.stopped || runs < report_.fix_rule.min_runs) continue;
      FixOutcome& outcome = report_.fixes[arm.outcome_index];
      outcome.verdict = verdictInterval(arm.variant, all, report_.fix_rule.lookConfidence());
      const Judgement judgement = judge(outcome.verdict, runs, report_.fix_rule);
      if (judgement == Judgement::kUndecided) continue;
      arm.stopped = true;
      if (options_.progress) {
        options_.progress(fmt::format("{}: {} after {} runs, {} {}", arm.variant.name, judgementName(judgement), runs,
                                      verdict_.title(), intervalWithConfidence(outcome.verdict)));
      }
    }
  }
  return {};
}

Result<void> Rounds::runCombined(Arm& combined, FixOutcome& outcome, const std::vector<Arm>& arms) {
  combined_ = &combined;
  std::vector<const Variant*> all = {&baseline_, &combined.variant};
  for (const Arm& arm : arms) all.push_back(&arm.variant);
  const int most = report_.combined_rule.max_runs;
  while (static_cast<int>(combined.variant.runs.size()) < most) {
    const std::size_t before = combined.variant.runs.size();
    std::vector<PlannedRun> plan;
    for (int slot = 0; slot < std::max(options_.parallel_runs, 1) && static_cast<int>(before) + slot < most; ++slot) {
      plan.push_back({&combined.variant, fmt::format("combined-{}", before + static_cast<std::size_t>(slot) + 1)});
    }
    if (auto ran = runWaves(plan); !ran) return ran.error();
    bool failed = false;
    for (std::size_t index = before; index < combined.variant.runs.size(); ++index) failed |= checkRun(combined, outcome, index);
    if (failed) break;
    const int runs = static_cast<int>(combined.variant.runs.size());
    outcome.verdict = verdictInterval(combined.variant, all, report_.combined_rule.lookConfidence());
    const Judgement judgement = judge(outcome.verdict, runs, report_.combined_rule);
    if (judgement != Judgement::kUndecided) {
      if (options_.progress) {
        options_.progress(fmt::format("combined: {} after {} runs, {} {}", judgementName(judgement), runs,
                                      verdict_.title(), intervalWithConfidence(outcome.verdict)));
      }
      break;
    }
  }
  combined.stopped = true;
  return {};
}

}  // namespace torchscope::compiler
