#include "torchscope/compiler/Statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace torchscope::compiler {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> resample(const std::vector<std::vector<double>>& repetitions, std::mt19937_64& random) {
  std::vector<double> pooled;
  std::uniform_int_distribution<std::size_t> pick_repetition(0, repetitions.size() - 1);
  for (std::size_t r = 0; r < repetitions.size(); ++r) {
    const auto& steps = repetitions[pick_repetition(random)];
    if (steps.empty()) continue;
    std::uniform_int_distribution<std::size_t> pick_step(0, steps.size() - 1);
    for (std::size_t s = 0; s < steps.size(); ++s) pooled.push_back(steps[pick_step(random)]);
  }
  return pooled;
}

std::vector<double> pool(const std::vector<std::vector<double>>& repetitions) {
  std::vector<double> pooled;
  for (const auto& steps : repetitions) pooled.insert(pooled.end(), steps.begin(), steps.end());
  return pooled;
}

}  // namespace

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return values[lower] + (values[upper] - values[lower]) * fraction;
}

double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

bool SpeedupInterval::valid() const {
  return std::isfinite(median) && std::isfinite(ci_low) && std::isfinite(ci_high);
}

SpeedupInterval bootstrapSpeedup(const std::vector<std::vector<double>>& baseline,
                                 const std::vector<std::vector<double>>& candidate, const BootstrapOptions& options) {
  const double baseline_median = median(pool(baseline));
  const double candidate_median = median(pool(candidate));
  if (!std::isfinite(baseline_median) || !std::isfinite(candidate_median) || candidate_median <= 0) {
    return {kNaN, kNaN, kNaN};
  }
  std::mt19937_64 random(options.seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(std::max(options.resamples, 0)));
  for (int i = 0; i < options.resamples; ++i) {
    const double b = median(resample(baseline, random));
    const double c = median(resample(candidate, random));
    if (std::isfinite(b) && std::isfinite(c) && c > 0) ratios.push_back(b / c);
  }
  const double tail = (1.0 - options.confidence) / 2.0;
  return {baseline_median / candidate_median, quantile(ratios, tail), quantile(ratios, 1.0 - tail)};
}

}  // namespace torchscope::compiler
