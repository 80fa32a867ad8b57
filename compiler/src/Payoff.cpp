#include <fmt/format.h>

#include <cmath>

#include "torchscope/compiler/Experiment.h"

namespace torchscope::compiler {
namespace {

// Seconds as a person reads them: "64 s", "1.2 s", "12 ms", "0.9 ms", "35 us".
std::string payoffDuration(double seconds) {
  const double size = std::fabs(seconds);
  if (size >= 10) return fmt::format("{:.0f} s", size);
  if (size >= 1) return fmt::format("{:.1f} s", size);
  if (size >= 1e-2) return fmt::format("{:.0f} ms", size * 1e3);
  if (size >= 1e-4) return fmt::format("{:.2g} ms", size * 1e3);
  return fmt::format("{:.0f} us", size * 1e6);
}

// A run length with thousands separators, to two significant digits: 70,000; 1,300; 42.
std::string stepCount(double steps) {
  const double magnitude = steps >= 100 ? std::pow(10.0, std::floor(std::log10(steps)) - 1) : 1;
  const std::string digits = fmt::format("{:.0f}", std::round(steps / magnitude) * magnitude);
  std::string grouped;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

double medianOf(const VariantStats& stats, const Metric& metric) {
  const auto found = stats.metrics.find(metric.name());
  return found == stats.metrics.end() ? -1 : found->second.median_s;
}

}  // namespace

bool Payoff::stepsSlower(double min_gain) const {
  if (!known() || !std::isfinite(step_speedup.estimate)) return false;
  return (step_speedup.valid() && step_speedup.ci_high < 1.0) || step_speedup.estimate < 1.0 / (1.0 + min_gain);
}

Payoff payoffOf(const VariantStats& baseline, const VariantStats& candidate, Clock clock) {
  Payoff payoff;
  const Metric compile{Measure::kCompile, clock};
  const Metric step{Measure::kSteadyStep, clock};
  // A job that compiles nothing has no compile figures: its compile time is zero for every variant.
  const double compile_base = std::max(medianOf(baseline, compile), 0.0);
  const double compile_fix = std::max(medianOf(candidate, compile), 0.0);
  const double step_base = medianOf(baseline, step);
  const double step_fix = medianOf(candidate, step);
  if (step_base <= 0 || step_fix <= 0) return payoff;  // no steady-state steps (a job that never steps)
  payoff.clock = clock == Clock::kCpu ? "cpu" : "wall";
  payoff.compile_saved_s = compile_base - compile_fix;
  payoff.step_saved_s = step_base - step_fix;
  if (const auto found = candidate.metrics.find(step.name()); found != candidate.metrics.end()) {
    payoff.step_speedup = found->second.speedup;
  }
  // Over a run of n steps the fix saves compile_saved + n * step_saved.
  const double compile_saved = payoff.compile_saved_s;
  const double step_saved = payoff.step_saved_s;
  if (compile_saved >= 0 && step_saved >= 0) {
    payoff.when = "always";
  } else if (compile_saved <= 0 && step_saved <= 0) {
    payoff.when = "never";
  } else {
    payoff.when = compile_saved > 0 ? "below" : "above";
    payoff.steps = std::fabs(compile_saved / step_saved);
  }
  return payoff;
}

std::string Payoff::text() const {
  if (!known()) return "";
  const std::string clock_name = clock == "cpu" ? "CPU time" : "wall time";
  const std::string compile_part = fmt::format("{} {} of compile {}", compile_saved_s >= 0 ? "saves" : "costs",
                                               payoffDuration(compile_saved_s), clock_name);
  std::string step_part =
      fmt::format("{} {} a step", step_saved_s >= 0 ? "saves" : "costs", payoffDuration(step_saved_s));
  if (std::isfinite(step_speedup.estimate)) {
    step_part += step_speedup.valid()
                     ? fmt::format(" ({:.3f}x [{:.3f}, {:.3f}]{})", step_speedup.estimate, step_speedup.ci_low,
                                   step_speedup.ci_high, step_speedup.excludesOne() ? "" : ", within noise")
                     : fmt::format(" ({:.3f}x)", step_speedup.estimate);
  }
  std::string verdict;
  if (when == "always") verdict = "worth it at any run length";
  if (when == "never") verdict = "worth it at no run length";
  if (when == "below") verdict = "worth it below " + stepCount(steps) + " steps";
  if (when == "above") verdict = "worth it above " + stepCount(steps) + " steps";
  return compile_part + ", " + step_part + ": " + verdict;
}

}  // namespace torchscope::compiler
