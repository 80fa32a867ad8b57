// The speed-up interval: exact values against known quantiles, and its coverage on simulated runs
// (the unit of replication is a run; run-to-run noise is multiplicative).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "torchscope/compiler/Statistics.h"

namespace torchscope::compiler {
namespace {

// `count` run times around `center` with multiplicative (log-normal) noise of relative spread `sigma`.
std::vector<double> simulatedRuns(double center, double sigma, int count, std::mt19937_64& random) {
  std::normal_distribution<double> noise(0.0, sigma);
  std::vector<double> values;
  for (int i = 0; i < count; ++i) values.push_back(center * std::exp(noise(random)));
  return values;
}

struct Coverage {
  double covered = 0;       // fraction of intervals containing the true speed-up
  double median_width = 0;  // median of ci_high / ci_low
};

// Experiments of `variants` variants (the baseline, the candidate and others) with `runs` runs
// each, the noise pooled over all of them as the harness does.
Coverage simulateCoverage(double speedup, double sigma, int runs, int variants, int trials) {
  std::mt19937_64 random(0xC0FFEE + static_cast<std::uint64_t>(runs * 10 + variants));
  int covered = 0;
  std::vector<double> widths;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<std::vector<double>> groups = {simulatedRuns(60.0, sigma, runs, random),
                                               simulatedRuns(60.0 / speedup, sigma, runs, random)};
    for (int other = 2; other < variants; ++other) groups.push_back(simulatedRuns(45.0, sigma, runs, random));
    const SpeedupInterval interval = speedupInterval(groups[0], groups[1], pooledLogNoise(groups));
    if (interval.ci_low <= speedup && speedup <= interval.ci_high) ++covered;
    widths.push_back(interval.ci_high / interval.ci_low);
  }
  return {static_cast<double>(covered) / trials, median(widths)};
}

TEST(Statistics, MedianAndQuantile) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(quantile({0, 10}, 0.25), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
}

TEST(Statistics, StudentTQuantilesMatchTheTables) {
  EXPECT_NEAR(studentTQuantile(0.975, 1), 12.7062, 1e-3);
  EXPECT_NEAR(studentTQuantile(0.975, 2), 4.3027, 1e-3);
  EXPECT_NEAR(studentTQuantile(0.975, 4), 2.7764, 1e-3);
  EXPECT_NEAR(studentTQuantile(0.995, 10), 3.1693, 1e-3);
  EXPECT_NEAR(studentTQuantile(0.975, 1e6), 1.9600, 1e-3);
  EXPECT_NEAR(studentTQuantile(0.025, 3), -3.1824, 1e-3);
  EXPECT_NEAR(studentTQuantile(0.9, 2.5), 1.73025, 1e-4);  // fractional degrees of freedom (numerical integration)
  EXPECT_TRUE(std::isnan(studentTQuantile(1.0, 3)));
}

TEST(Statistics, StudentIntervalOfKnownRuns) {
  // Logs 0, 0.2 vs -0.3, -0.1: difference 0.3, pooled variance 0.02, standard error 0.1414, 2 degrees of freedom.
  const SpeedupInterval interval = speedupInterval({1.0, std::exp(0.2)}, {std::exp(-0.3), std::exp(-0.1)});
  ASSERT_TRUE(interval.valid());
  EXPECT_NEAR(interval.estimate, std::exp(0.3), 1e-12);
  EXPECT_NEAR(interval.degrees_of_freedom, 2.0, 1e-9);
  EXPECT_NEAR(interval.ci_low, std::exp(0.3 - 4.3027 * std::sqrt(0.02)), 1e-3);
  EXPECT_NEAR(interval.ci_high, std::exp(0.3 + 4.3027 * std::sqrt(0.02)), 1e-3);
}

TEST(Statistics, NoisePooledOverVariants) {
  // Two runs of three variants: 3 degrees of freedom; a variant with one run adds none.
  const LogNoise noise = pooledLogNoise({{1.0, std::exp(0.2)}, {2.0, 2.0 * std::exp(0.4)}, {3.0, 3.0}, {5.0}});
  EXPECT_DOUBLE_EQ(noise.degrees_of_freedom, 3.0);
  EXPECT_NEAR(noise.variance, (0.02 + 0.08 + 0.0) / 3.0, 1e-12);
  // A variant measured once gets an interval from the noise of the others.
  const SpeedupInterval single = speedupInterval({4.0, 4.0 * std::exp(0.2)}, {2.0}, noise);
  ASSERT_TRUE(single.valid());
  EXPECT_NEAR(single.estimate, 2.0 * std::exp(0.1), 1e-12);
  EXPECT_NEAR(std::log(single.ci_high / single.estimate),
              studentTQuantile(0.975, 3.0) * std::sqrt(noise.variance * 1.5), 1e-9);
}

TEST(Statistics, OneRunEachGivesAnEstimateButNoInterval) {
  const SpeedupInterval interval = speedupInterval({10.0}, {5.0});
  EXPECT_DOUBLE_EQ(interval.estimate, 2.0);
  EXPECT_FALSE(interval.valid());
  EXPECT_FALSE(interval.excludesOne());
  EXPECT_TRUE(std::isnan(speedupInterval({}, {1.0}).estimate));
  EXPECT_TRUE(std::isnan(speedupInterval({-1.0, 0.0}, {1.0, 2.0}).estimate));
}

TEST(Statistics, IdenticalRunsGiveAPointInterval) {
  const SpeedupInterval interval = speedupInterval({4.0, 4.0}, {2.0, 2.0});
  ASSERT_TRUE(interval.valid());
  EXPECT_DOUBLE_EQ(interval.ci_low, 2.0);
  EXPECT_DOUBLE_EQ(interval.ci_high, 2.0);
}

// The 95 % interval contains the true speed-up in 95 % of simulated experiments, at every number
// of runs the sequential design uses, for two variants alone and with the noise pooled over four.
TEST(Statistics, IntervalCoversTheTrueSpeedupAtFixedRuns) {
  for (const int runs : {2, 3, 5}) {
    for (const int variants : {2, 4}) {
      const Coverage coverage = simulateCoverage(1.4, 0.03, runs, variants, 4000);
      EXPECT_GE(coverage.covered, 0.935) << runs << " runs of " << variants << " variants";
      EXPECT_LE(coverage.covered, 0.965) << runs << " runs of " << variants << " variants";
    }
  }
}

// With 3 % noise per run the interval is a few per cent wide, never the tenfold width of an
// estimator that does not describe the data; more runs and more variants narrow it.
TEST(Statistics, IntervalWidthFollowsTheNoise) {
  const Coverage two_runs = simulateCoverage(1.4, 0.03, 2, 3, 2000);
  EXPECT_LT(two_runs.median_width, 1.35);
  const Coverage three_runs = simulateCoverage(1.4, 0.03, 3, 3, 2000);
  EXPECT_LT(three_runs.median_width, two_runs.median_width);
  EXPECT_LT(simulateCoverage(1.4, 0.03, 2, 4, 2000).median_width, two_runs.median_width);
}

}  // namespace
}  // namespace torchscope::compiler
