// The stopping rule of `torchscope fix`: unit cases, and its error rate and run count on simulated
// experiments run the way the harness runs them: per round a baseline run, a run of the candidate
// and a run of a second fix (1.3x faster), the noise pooled over the three, a look after each round.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "torchscope/compiler/Sequential.h"

namespace torchscope::compiler {
namespace {

struct Outcome {
  Judgement judgement = Judgement::kUndecided;
  int runs = 0;
};

Outcome simulateExperiment(double speedup, double sigma, const SequentialRule& rule, std::mt19937_64& random) {
  std::normal_distribution<double> noise(0.0, sigma);
  std::vector<std::vector<double>> groups(3);  // baseline, candidate, the other fix
  for (int run = 1; run <= rule.max_runs; ++run) {
    groups[0].push_back(60.0 * std::exp(noise(random)));
    groups[1].push_back(60.0 / speedup * std::exp(noise(random)));
    groups[2].push_back(60.0 / 1.3 * std::exp(noise(random)));
    const SpeedupInterval interval =
        speedupInterval(groups[0], groups[1], pooledLogNoise(groups), rule.lookConfidence());
    const Judgement judgement = judge(interval, run, rule);
    if (judgement != Judgement::kUndecided) return {judgement, run};
  }
  return {Judgement::kUndecided, rule.max_runs};
}

struct Rates {
  double faster = 0;
  double slower = 0;
  double stopped_at_min = 0;
  double mean_runs = 0;
};

Rates simulateRates(double speedup, double sigma, const SequentialRule& rule, int trials) {
  std::mt19937_64 random(0x5E9 + static_cast<std::uint64_t>(speedup * 1000) + static_cast<std::uint64_t>(sigma * 1e4));
  Rates rates;
  for (int trial = 0; trial < trials; ++trial) {
    const Outcome outcome = simulateExperiment(speedup, sigma, rule, random);
    EXPECT_NE(outcome.judgement, Judgement::kUndecided) << "the rule must decide by max_runs";
    rates.faster += outcome.judgement == Judgement::kFaster;
    rates.slower += outcome.judgement == Judgement::kSlower;
    rates.stopped_at_min += outcome.runs == rule.min_runs;
    rates.mean_runs += outcome.runs;
  }
  for (double* rate : {&rates.faster, &rates.slower, &rates.stopped_at_min, &rates.mean_runs}) *rate /= trials;
  return rates;
}

SpeedupInterval interval(double estimate, double low, double high) { return {estimate, low, high, 0.95, 3}; }

TEST(Sequential, LookConfidenceSplitsAlphaOverTheLooks) {
  SequentialRule rule;
  rule.min_runs = 2;
  rule.max_runs = 5;
  EXPECT_EQ(rule.looks(), 4);
  EXPECT_DOUBLE_EQ(rule.lookConfidence(), 1.0 - 0.05 / 4);
  rule.max_runs = 2;
  EXPECT_EQ(rule.looks(), 1);
  EXPECT_DOUBLE_EQ(rule.lookConfidence(), 0.95);
}

TEST(Sequential, JudgesIntervals) {
  const SequentialRule rule;  // 2..5 runs, min gain 2 %
  EXPECT_EQ(judge(interval(1.5, 1.3, 1.7), 1, rule), Judgement::kUndecided);  // below min_runs
  EXPECT_EQ(judge(interval(1.5, 1.3, 1.7), 2, rule), Judgement::kFaster);
  EXPECT_EQ(judge(interval(0.8, 0.7, 0.9), 2, rule), Judgement::kSlower);
  EXPECT_EQ(judge(interval(1.1, 0.9, 1.3), 3, rule), Judgement::kUndecided);
  EXPECT_EQ(judge(interval(1.1, 0.9, 1.3), 5, rule), Judgement::kNoChange);   // max_runs reached
  EXPECT_EQ(judge(interval(1.0, 0.99, 1.01), 2, rule), Judgement::kNoChange); // inside the ±2 % band
  EXPECT_EQ(judge(interval(1.01, 1.005, 1.015), 2, rule), Judgement::kNoChange);  // real but below min gain
  EXPECT_EQ(judge({1.2, NAN, NAN, 0.95, NAN}, 2, rule), Judgement::kUndecided);
}

// A fix with no effect is accepted in well under alpha of the experiments although every run
// from the second on is a look.
TEST(Sequential, NoEffectIsRarelyAccepted) {
  const SequentialRule rule;
  for (const double sigma : {0.01, 0.05, 0.15}) {
    const Rates rates = simulateRates(1.0, sigma, rule, 4000);
    EXPECT_LE(rates.faster, rule.alpha / 2 + 0.01) << "sigma " << sigma;
    EXPECT_LE(rates.faster + rates.slower, rule.alpha + 0.01) << "sigma " << sigma;
  }
}

// The fixes the demo measures change the job by 1.3x or more; with a few per cent of noise per run
// the rule decides after the second run of the fix almost always, spending no run on confirmation.
TEST(Sequential, LargeEffectsStopAtTheSecondRun) {
  const SequentialRule rule;
  const Rates rates = simulateRates(1.3, 0.03, rule, 2000);
  EXPECT_GE(rates.faster, 0.99);
  EXPECT_GE(rates.stopped_at_min, 0.85);
  const Rates slower = simulateRates(1.0 / 1.3, 0.03, rule, 2000);
  EXPECT_GE(slower.slower, 0.99);
}

// A small real gain needs more runs; noise far above the gain leaves it undecided at max_runs.
TEST(Sequential, SmallEffectsUseMoreRuns) {
  const SequentialRule rule;
  const Rates small = simulateRates(1.1, 0.03, rule, 2000);
  EXPECT_GT(small.mean_runs, simulateRates(1.3, 0.03, rule, 2000).mean_runs);
  const Rates drowned = simulateRates(1.05, 0.3, rule, 2000);
  EXPECT_LE(drowned.faster, 0.2);
}

}  // namespace
}  // namespace torchscope::compiler
