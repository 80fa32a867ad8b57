// Statistics for before/after comparisons of whole runs (torchscope/base/Statistics.h), with the compiler's rule
// for quantiles: an empty sample's are NaN.
//
// The unit of replication is a run (or a round of calls): each run gives one number per measure
// (its end-to-end time, its median steady-state step, ...). The noise of a run is a property of the machine and
// the job, the same for every variant of it, so it is estimated once from the runs of all variants of an
// experiment (pooledLogNoise): with two runs each of a baseline and two fixes that is 3 degrees of freedom, where
// each pair alone would have 2. tests/compiler/StatisticsTest.cpp checks the coverage of the interval on simulated
// runs.
#pragma once

#include <utility>
#include <vector>

#include "torchscope/base/Statistics.h"

namespace torchscope::compiler {

inline constexpr base::QuantileRule kQuantileRule{base::kUnknown, base::Interpolation::kFromLower};

[[nodiscard]] inline double quantile(std::vector<double> values, double q) {
  return base::quantile(std::move(values), q, kQuantileRule);
}
[[nodiscard]] inline double median(std::vector<double> values) {
  return base::median(std::move(values), kQuantileRule);
}

using base::LogNoise;
using base::pooledLogNoise;
using base::SpeedupInterval;
using base::speedupInterval;
using base::studentTQuantile;

}  // namespace torchscope::compiler
