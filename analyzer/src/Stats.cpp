#include "Stats.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace torchscope::analyzer {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const auto above = std::min(below + 1, values.size() - 1);
  const double weight = position - static_cast<double>(below);
  return values[below] * (1 - weight) + values[above] * weight;
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

}  // namespace torchscope::analyzer
