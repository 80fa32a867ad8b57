#include "torchscope/base/Statistics.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace torchscope::base {
namespace {

// Continued fraction of the regularized incomplete beta function (modified Lentz), valid for
// x < (a + 1) / (a + b + 2).
double betaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEpsilon = 1e-15;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  d = 1.0 / (std::fabs(d) < kTiny ? kTiny : d);
  double fraction = d;
  for (int m = 1; m <= 500; ++m) {
    const double two_m = 2.0 * m;
    for (const double coefficient : {m * (b - m) * x / ((a + two_m - 1.0) * (a + two_m)),
                                     -(a + m) * (a + b + m) * x / ((a + two_m) * (a + two_m + 1.0))}) {
      d = 1.0 + coefficient * d;
      d = 1.0 / (std::fabs(d) < kTiny ? kTiny : d);
      c = 1.0 + coefficient / c;
      if (std::fabs(c) < kTiny) c = kTiny;
      fraction *= c * d;
    }
    if (std::fabs(c * d - 1.0) < kEpsilon) break;
  }
  return fraction;
}

double regularizedBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1.0) / (a + b + 2.0)) return std::exp(log_front) * betaContinuedFraction(a, b, x) / a;
  return 1.0 - std::exp(log_front) * betaContinuedFraction(b, a, 1.0 - x) / b;
}

// P(T <= t) for t >= 0.
double studentTCdf(double t, double degrees_of_freedom) {
  return 1.0 - 0.5 * regularizedBeta(degrees_of_freedom / 2.0, 0.5, degrees_of_freedom / (degrees_of_freedom + t * t));
}

std::vector<double> positiveLogs(const std::vector<double>& values) {
  std::vector<double> logs;
  for (const double value : values) {
    if (std::isfinite(value) && value > 0) logs.push_back(std::log(value));
  }
  return logs;
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (const double value : values) sum += value;
  return sum / static_cast<double>(values.size());
}

}  // namespace

double quantile(std::vector<double> values, double q, const QuantileRule& rule) {
  if (values.empty()) return rule.empty;
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  if (rule.interpolation == Interpolation::kWeightedMean) {
    return values[lower] * (1 - fraction) + values[upper] * fraction;
  }
  return values[lower] + (values[upper] - values[lower]) * fraction;
}

double median(std::vector<double> values, const QuantileRule& rule) { return quantile(std::move(values), 0.5, rule); }

double studentTQuantile(double p, double degrees_of_freedom) {
  if (!(p > 0 && p < 1) || !(degrees_of_freedom > 0)) return kUnknown;
  if (p < 0.5) return -studentTQuantile(1.0 - p, degrees_of_freedom);
  if (p == 0.5) return 0;
  double low = 0;
  double high = 1;
  while (studentTCdf(high, degrees_of_freedom) < p) {
    low = high;
    high *= 2;
    if (high > 1e12) return high;
  }
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double middle = (low + high) / 2;
    (studentTCdf(middle, degrees_of_freedom) < p ? low : high) = middle;
  }
  return (low + high) / 2;
}

bool SpeedupInterval::valid() const {
  return std::isfinite(estimate) && std::isfinite(ci_low) && std::isfinite(ci_high);
}

LogNoise pooledLogNoise(const std::vector<std::vector<double>>& groups) {
  double squares = 0;
  double degrees = 0;
  for (const auto& group : groups) {
    const std::vector<double> logs = positiveLogs(group);
    if (logs.size() < 2) continue;
    const double center = mean(logs);
    for (const double value : logs) squares += (value - center) * (value - center);
    degrees += static_cast<double>(logs.size() - 1);
  }
  return {degrees > 0 ? squares / degrees : 0.0, degrees};
}

SpeedupInterval speedupInterval(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                const LogNoise& noise, double confidence) {
  SpeedupInterval interval{kUnknown, kUnknown, kUnknown, confidence, noise.degrees_of_freedom};
  const std::vector<double> b = positiveLogs(baseline);
  const std::vector<double> c = positiveLogs(candidate);
  if (b.empty() || c.empty()) return interval;
  const double difference = mean(b) - mean(c);
  interval.estimate = std::exp(difference);
  if (!(noise.degrees_of_freedom >= 1)) return interval;
  const double standard_error =
      std::sqrt(noise.variance * (1.0 / static_cast<double>(b.size()) + 1.0 / static_cast<double>(c.size())));
  const double half_width = studentTQuantile(0.5 + confidence / 2.0, noise.degrees_of_freedom) * standard_error;
  interval.ci_low = std::exp(difference - half_width);
  interval.ci_high = std::exp(difference + half_width);
  return interval;
}

SpeedupInterval speedupInterval(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                double confidence) {
  return speedupInterval(baseline, candidate, pooledLogNoise({baseline, candidate}), confidence);
}

double mannWhitneyP(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 3 || b.size() < 3) return 1;
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(a.size() + b.size());
  for (double value : a) pooled.emplace_back(value, 0);
  for (double value : b) pooled.emplace_back(value, 1);
  std::sort(pooled.begin(), pooled.end());
  // Mid-ranks for ties; the tie term corrects the variance.
  double rank_sum_a = 0;
  double tie_term = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double mid_rank = (static_cast<double>(i + j) + 1) / 2;
    const auto tied = static_cast<double>(j - i);
    tie_term += tied * tied * tied - tied;
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second == 0) rank_sum_a += mid_rank;
    }
    i = j;
  }
  const auto n1 = static_cast<double>(a.size());
  const auto n2 = static_cast<double>(b.size());
  const double u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double mean = n1 * n2 / 2;
  const double n = n1 + n2;
  const double variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return 1;
  const double z = (std::abs(u - mean) - 0.5) / std::sqrt(variance);  // continuity correction
  return std::clamp(std::erfc(std::max(0.0, z) / std::sqrt(2.0)), 0.0, 1.0);
}

}  // namespace torchscope::base
