// Statistics for before/after comparisons of whole runs.
//
// The unit of replication is a run (or a round of calls): each run gives one number per measure
// (its end-to-end time, its median steady-state step, ...). Variants are compared on the log scale,
// where run-to-run noise is multiplicative and a speed-up is a difference: the estimate is the
// ratio of geometric means, baseline over candidate (> 1: the candidate is faster), and its
// interval is Student's t interval of the difference of mean logs. The noise of a run is a
// property of the machine and the job, the same for every variant of it, so it is estimated once
// from the runs of all variants of an experiment (the error term of a one-way analysis of
// variance): with two runs each of a baseline and two fixes that is 3 degrees of freedom, where
// each pair alone would have 2. tests/compiler/StatisticsTest.cpp checks the coverage of the
// interval on simulated runs.
//
// Error contract: pure functions, no I/O. Empty inputs give NaN medians; an interval needs at
// least one degree of freedom of noise, else its bounds are NaN (valid() is false; the estimate
// may still be known).
#pragma once

#include <limits>
#include <vector>

namespace torchscope::compiler {

[[nodiscard]] double median(std::vector<double> values);
// Linear-interpolated quantile, q in [0, 1].
[[nodiscard]] double quantile(std::vector<double> values, double q);

// Quantile p of Student's t distribution with `degrees_of_freedom` (> 0, may be fractional).
[[nodiscard]] double studentTQuantile(double p, double degrees_of_freedom);

struct SpeedupInterval {
  static constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
  double estimate = kUnknown;  // baseline over candidate: geometric mean ratio of the per-run values
  double ci_low = kUnknown;
  double ci_high = kUnknown;
  double confidence = 0.95;
  double degrees_of_freedom = kUnknown;
  [[nodiscard]] bool valid() const;  // estimate and both bounds finite
  [[nodiscard]] bool excludesOne() const { return valid() && (ci_low > 1.0 || ci_high < 1.0); }
};

// The within-variant variance of the logs of run values, pooled over variants (one group of runs
// each), with its degrees of freedom: runs minus groups.
struct LogNoise {
  double variance = 0;
  double degrees_of_freedom = 0;
};
[[nodiscard]] LogNoise pooledLogNoise(const std::vector<std::vector<double>>& groups);

// Speed-up of `candidate` over `baseline`, one positive value per run on each side (times:
// smaller is better), with the interval from `noise`. Non-positive or non-finite values are left out.
[[nodiscard]] SpeedupInterval speedupInterval(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                              const LogNoise& noise, double confidence = 0.95);
// The same with the noise of these two groups alone (Student's two-sample interval).
[[nodiscard]] SpeedupInterval speedupInterval(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                              double confidence = 0.95);

}  // namespace torchscope::compiler
