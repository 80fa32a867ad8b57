// Statistics for before/after comparisons: medians and bootstrap confidence intervals.
//
// Error contract: pure functions, no I/O. Empty inputs give NaN medians and an interval of NaNs;
// callers check `valid()` before reporting.
#pragma once

#include <cstdint>
#include <vector>

namespace torchscope::compiler {

[[nodiscard]] double median(std::vector<double> values);
// Linear-interpolated quantile, q in [0, 1].
[[nodiscard]] double quantile(std::vector<double> values, double q);

struct SpeedupInterval {
  double median = 0;   // baseline median / candidate median on all the data
  double ci_low = 0;   // 95 % percentile-bootstrap interval
  double ci_high = 0;
  [[nodiscard]] bool valid() const;
};

struct BootstrapOptions {
  int resamples = 2000;
  std::uint64_t seed = 0x5eed;  // fixed: the same data gives the same interval
  double confidence = 0.95;
};

// Speed-up of the median step time, baseline over candidate (> 1: the candidate is faster).
// Each argument holds one vector of steady-state step times per repetition. The interval comes
// from a two-level (hierarchical) bootstrap: each resample draws repetitions with replacement,
// then steps with replacement inside each drawn repetition, pools them and takes the ratio of
// medians. Drawing repetitions keeps run-to-run variation in the interval, which resampling
// steps alone would hide.
[[nodiscard]] SpeedupInterval bootstrapSpeedup(const std::vector<std::vector<double>>& baseline,
                                               const std::vector<std::vector<double>>& candidate,
                                               const BootstrapOptions& options = {});

}  // namespace torchscope::compiler
