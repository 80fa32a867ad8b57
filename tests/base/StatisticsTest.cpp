// Quantiles under both interpolations and both empty-sample values, the speed-up interval and the rank test,
// against values worked out by hand.
#include "torchscope/base/Statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace torchscope::base {
namespace {

constexpr QuantileRule kFromLowerRule{kUnknown, Interpolation::kFromLower};
constexpr QuantileRule kWeightedRule{0.0, Interpolation::kWeightedMean};

TEST(Quantile, InterpolatesLinearlyBetweenOrderStatistics) {
  for (const QuantileRule& rule : {kFromLowerRule, kWeightedRule}) {
    EXPECT_DOUBLE_EQ(median({3, 1, 2}, rule), 2);
    EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}, rule), 2.5);
    EXPECT_DOUBLE_EQ(quantile({0, 10}, 0.25, rule), 2.5);
    EXPECT_DOUBLE_EQ(quantile({10, 0, 20, 30, 40}, 0.1, rule), 4);  // position 0.4 between 0 and 10
    EXPECT_DOUBLE_EQ(quantile({10, 0, 20, 30, 40}, 0.9, rule), 36);
    EXPECT_DOUBLE_EQ(quantile({5, 7}, -1, rule), 5);  // q clamped to [0, 1]
    EXPECT_DOUBLE_EQ(quantile({5, 7}, 2, rule), 7);
    EXPECT_DOUBLE_EQ(median({42}, rule), 42);
  }
}

TEST(Quantile, TheTwoInterpolationsRoundDifferently) {
  // 0.1 + (0.7 - 0.1) / 2 rounds twice; 0.1 / 2 + 0.7 / 2 once.
  const std::vector<double> values{0.1, 0.7};
  EXPECT_EQ(median(values, kFromLowerRule), 0.1 + (0.7 - 0.1) * 0.5);
  EXPECT_EQ(median(values, kWeightedRule), 0.1 * 0.5 + 0.7 * 0.5);
  EXPECT_NE(median(values, kFromLowerRule), median(values, kWeightedRule));
}

TEST(Quantile, EmptySampleGivesTheRulesValue) {
  EXPECT_TRUE(std::isnan(median({})));
  EXPECT_TRUE(std::isnan(quantile({}, 0.9, kFromLowerRule)));
  EXPECT_DOUBLE_EQ(median({}, kWeightedRule), 0);
  EXPECT_DOUBLE_EQ(quantile({}, 0.1, {.empty = -1}), -1);
}

TEST(SpeedupInterval, StudentIntervalOfKnownRuns) {
  EXPECT_NEAR(studentTQuantile(0.975, 2), 4.3027, 1e-3);
  EXPECT_NEAR(studentTQuantile(0.025, 3), -3.1824, 1e-3);
  EXPECT_TRUE(std::isnan(studentTQuantile(0.975, 0)));
  // Logs 0, 0.2 vs -0.3, -0.1: difference 0.3, pooled variance 0.02, 2 degrees of freedom.
  const SpeedupInterval interval = speedupInterval({1.0, std::exp(0.2)}, {std::exp(-0.3), std::exp(-0.1)});
  ASSERT_TRUE(interval.valid());
  EXPECT_FALSE(interval.excludesOne());  // half width 0.61 on the log scale
  EXPECT_NEAR(interval.estimate, std::exp(0.3), 1e-12);
  EXPECT_NEAR(interval.ci_low, std::exp(0.3 - 4.3027 * std::sqrt(0.02)), 1e-3);
  EXPECT_NEAR(interval.ci_high, std::exp(0.3 + 4.3027 * std::sqrt(0.02)), 1e-3);
  // Logs 0, 0.02 vs -0.3, -0.32: pooled variance 0.0002, half width 0.061.
  const SpeedupInterval tight = speedupInterval({1.0, std::exp(0.02)}, {std::exp(-0.3), std::exp(-0.32)});
  EXPECT_TRUE(tight.excludesOne());
  EXPECT_NEAR(tight.ci_low, std::exp(0.32 - 4.3027 * std::sqrt(0.0002)), 1e-3);
}

TEST(SpeedupInterval, EmptyOrSingleSamplesGiveNoInterval) {
  EXPECT_TRUE(std::isnan(speedupInterval({}, {1.0, 2.0}).estimate));
  const SpeedupInterval single = speedupInterval({10.0}, {5.0});
  EXPECT_DOUBLE_EQ(single.estimate, 2.0);
  EXPECT_FALSE(single.valid());
  const LogNoise none = pooledLogNoise({{}, {3.0}, {0.0, -1.0}});
  EXPECT_DOUBLE_EQ(none.degrees_of_freedom, 0);
  EXPECT_DOUBLE_EQ(none.variance, 0);
}

TEST(MannWhitney, SeparatedSamplesAreSignificantAndSmallOnesAreNot) {
  // U = 0 for 5 against 5 with no ties: z = (12.5 - 0.5) / sqrt(22.9167) = 2.5067, p = erfc(z / sqrt 2).
  const double p = mannWhitneyP({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_NEAR(p, std::erfc(12.0 / std::sqrt(25.0 * 11 / 12) / std::sqrt(2.0)), 1e-12);
  EXPECT_LT(p, 0.05);
  EXPECT_DOUBLE_EQ(mannWhitneyP({1, 2}, {6, 7, 8}), 1);
  EXPECT_DOUBLE_EQ(mannWhitneyP({}, {}), 1);
  EXPECT_DOUBLE_EQ(mannWhitneyP({3, 3, 3}, {3, 3, 3}), 1);  // all tied: no variance
}

}  // namespace
}  // namespace torchscope::base
