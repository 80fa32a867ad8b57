// Small statistics for step times: order statistics and the Mann-Whitney U test.
#pragma once

#include <vector>

namespace torchscope::analyzer {

// The q-quantile (0..1) with linear interpolation; 0 for an empty sample.
double quantile(std::vector<double> values, double q);
inline double median(const std::vector<double>& values) { return quantile(values, 0.5); }

// Two-sided p-value of the Mann-Whitney U test (normal approximation with tie correction).
// 1 when either sample has fewer than 3 values: too few to say anything.
double mannWhitneyP(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace torchscope::analyzer
