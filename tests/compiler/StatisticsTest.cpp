#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "torchscope/compiler/Statistics.h"

namespace torchscope::compiler {
namespace {

std::vector<double> noisy(double center, double spread, int count, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> noise(0.0, spread);
  std::vector<double> values;
  for (int i = 0; i < count; ++i) values.push_back(center + noise(random));
  return values;
}

TEST(Statistics, MedianAndQuantile) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(quantile({0, 10}, 0.25), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
}

TEST(Statistics, IdenticalDistributionsGiveAnIntervalAroundOne) {
  const std::vector<std::vector<double>> a = {noisy(1.0, 0.05, 40, 1), noisy(1.0, 0.05, 40, 2), noisy(1.0, 0.05, 40, 3)};
  const std::vector<std::vector<double>> b = {noisy(1.0, 0.05, 40, 4), noisy(1.0, 0.05, 40, 5), noisy(1.0, 0.05, 40, 6)};
  const auto speedup = bootstrapSpeedup(a, b);
  ASSERT_TRUE(speedup.valid());
  EXPECT_LT(speedup.ci_low, 1.0);
  EXPECT_GT(speedup.ci_high, 1.0);
  EXPECT_LE(speedup.ci_low, speedup.median);
  EXPECT_GE(speedup.ci_high, speedup.median);
}

TEST(Statistics, ClearlyFasterCandidateHasAnIntervalAboveOne) {
  const std::vector<std::vector<double>> base = {noisy(2.0, 0.05, 30, 1), noisy(2.0, 0.05, 30, 2)};
  const std::vector<std::vector<double>> fast = {noisy(1.0, 0.05, 30, 3), noisy(1.0, 0.05, 30, 4)};
  const auto speedup = bootstrapSpeedup(base, fast);
  EXPECT_NEAR(speedup.median, 2.0, 0.1);
  EXPECT_GT(speedup.ci_low, 1.8);
  EXPECT_LT(speedup.ci_high, 2.2);
}

TEST(Statistics, RepetitionVarianceWidensTheInterval) {
  // Steps are tight inside each run but the runs disagree: the interval must show it.
  const std::vector<std::vector<double>> base = {noisy(1.0, 0.001, 50, 1), noisy(1.3, 0.001, 50, 2), noisy(0.8, 0.001, 50, 3)};
  const std::vector<std::vector<double>> cand = {noisy(1.0, 0.001, 50, 4), noisy(1.0, 0.001, 50, 5), noisy(1.0, 0.001, 50, 6)};
  const auto speedup = bootstrapSpeedup(base, cand);
  EXPECT_LT(speedup.ci_low, 0.95);
  EXPECT_GT(speedup.ci_high, 1.05);
}

TEST(Statistics, SameDataSameInterval) {
  const std::vector<std::vector<double>> a = {noisy(1.0, 0.1, 20, 1)};
  const std::vector<std::vector<double>> b = {noisy(0.9, 0.1, 20, 2)};
  const auto first = bootstrapSpeedup(a, b);
  const auto second = bootstrapSpeedup(a, b);
  EXPECT_EQ(first.ci_low, second.ci_low);
  EXPECT_EQ(first.ci_high, second.ci_high);
}

TEST(Statistics, EmptyInputIsInvalid) {
  EXPECT_FALSE(bootstrapSpeedup({}, {{1.0}}).valid());
  EXPECT_FALSE(bootstrapSpeedup({{}}, {{1.0}}).valid());
}

}  // namespace
}  // namespace torchscope::compiler
