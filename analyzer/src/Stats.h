// The analyzer's statistics (torchscope/base/Statistics.h) with its rule for quantiles: 0 for an empty sample.
#pragma once

#include <utility>
#include <vector>

#include "torchscope/base/Statistics.h"

namespace torchscope::analyzer {

inline constexpr base::QuantileRule kQuantileRule{0.0, base::Interpolation::kWeightedMean};

inline double quantile(std::vector<double> values, double q) {
  return base::quantile(std::move(values), q, kQuantileRule);
}
inline double median(const std::vector<double>& values) { return quantile(values, 0.5); }

using base::mannWhitneyP;

}  // namespace torchscope::analyzer
