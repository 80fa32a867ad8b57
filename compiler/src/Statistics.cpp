#include "torchscope/compiler/Statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace torchscope::compiler {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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

double studentTQuantile(double p, double degrees_of_freedom) {
  if (!(p > 0 && p < 1) || !(degrees_of_freedom > 0)) return kNaN;
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
  SpeedupInterval interval{kNaN, kNaN, kNaN, confidence, noise.degrees_of_freedom};
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

}  // namespace torchscope::compiler
