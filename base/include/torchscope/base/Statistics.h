// The project's statistics: quantiles of a sample, the interval of a speed-up, a rank test. Pure functions, no I/O,
// no exceptions.
//
// Quantiles interpolate linearly between the order statistics around q·(n - 1) (Hyndman and Fan's type 7, R's and
// NumPy's default). Two users write that interpolation with different arithmetic, which rounds differently in the
// last bit, and give an empty sample different values; a QuantileRule names both, so that each user keeps its
// results to the bit.
//
// Speed-ups are compared on the log scale, where run-to-run noise is multiplicative and a speed-up is a difference:
// the estimate is the ratio of geometric means, baseline over candidate (> 1: the candidate is faster), and its
// interval is Student's t interval of the difference of mean logs. The noise can be pooled over several groups of
// runs (the error term of a one-way analysis of variance). An interval needs at least one degree of freedom of
// noise, else its bounds are NaN (valid() is false; the estimate may still be known).
#pragma once

#include <limits>
#include <vector>

namespace torchscope::base {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// How the value between the two order statistics `lower` and `upper` around the quantile's position is written,
// `fraction` being the position's distance from `lower`. The same rule; the results may differ in the last bit.
enum class Interpolation {
  kFromLower,     // lower + (upper - lower) * fraction
  kWeightedMean,  // lower * (1 - fraction) + upper * fraction
};

struct QuantileRule {
  double empty = kUnknown;  // every quantile of an empty sample
  Interpolation interpolation = Interpolation::kFromLower;
};

// The q-quantile, q clamped to [0, 1].
[[nodiscard]] double quantile(std::vector<double> values, double q, const QuantileRule& rule = {});
[[nodiscard]] double median(std::vector<double> values, const QuantileRule& rule = {});

// Quantile p of Student's t distribution with `degrees_of_freedom` (> 0, may be fractional); NaN outside.
[[nodiscard]] double studentTQuantile(double p, double degrees_of_freedom);

struct SpeedupInterval {
  static constexpr double kUnknown = base::kUnknown;
  double estimate = kUnknown;  // baseline over candidate: geometric mean ratio of the per-run values
  double ci_low = kUnknown;
  double ci_high = kUnknown;
  double confidence = 0.95;
  double degrees_of_freedom = kUnknown;
  [[nodiscard]] bool valid() const;  // estimate and both bounds finite
  [[nodiscard]] bool excludesOne() const { return valid() && (ci_low > 1.0 || ci_high < 1.0); }
};

// The within-group variance of the logs of the values, pooled over the groups, with its degrees of freedom:
// values minus groups. Non-positive or non-finite values are left out.
struct LogNoise {
  double variance = 0;
  double degrees_of_freedom = 0;
};
[[nodiscard]] LogNoise pooledLogNoise(const std::vector<std::vector<double>>& groups);

// Speed-up of `candidate` over `baseline`, one positive value per run on each side (times: smaller is better),
// with the interval from `noise`. Non-positive or non-finite values are left out.
[[nodiscard]] SpeedupInterval speedupInterval(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                              const LogNoise& noise, double confidence = 0.95);
// The same with the noise of these two groups alone (Student's two-sample interval).
[[nodiscard]] SpeedupInterval speedupInterval(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                              double confidence = 0.95);

// Two-sided p-value of the Mann-Whitney U test (normal approximation with tie and continuity correction).
// 1 when either sample has fewer than 3 values: too few to say anything.
[[nodiscard]] double mannWhitneyP(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace torchscope::base
