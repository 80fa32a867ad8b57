// The stack sampler's budget (TickBudget.h): the interval it keeps between ticks for what they cost, and
// TORCHSCOPE_SAMPLE_BUDGET read from the environment.
#include "TickBudget.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>

namespace torchscope::collector {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr std::int64_t kMicrosecond = 1'000;

TEST(TickBudget, CheapTicksKeepTheAskedPeriod) {
  TickBudget budget(milliseconds(10), 0.5);
  for (int i = 0; i < 50; ++i) budget.addCycle(40 * kMicrosecond);  // 0.4 % of a core at 100 Hz
  EXPECT_EQ(budget.meanInterval(), milliseconds(10));
  EXPECT_EQ(budget.stretchedCycles(), 0);
  EXPECT_EQ(budget.cycles(), 50);
  EXPECT_EQ(budget.cpuNs(), 50 * 40 * kMicrosecond);
}

TEST(TickBudget, TicksThatCostMoreThanTheShareAreSpreadUntilTheyFitIt) {
  TickBudget budget(milliseconds(10), 0.5);
  for (int i = 0; i < 20; ++i) budget.addCycle(100 * kMicrosecond);
  // 100 us every 20 ms is 0.5 % of a core.
  EXPECT_EQ(budget.meanInterval(), milliseconds(20));
  // Every cycle after the first ran at the longer interval.
  EXPECT_EQ(budget.stretchedCycles(), 19);
  // Cheaper ticks bring the asked period back.
  for (int i = 0; i < 40; ++i) budget.addCycle(10 * kMicrosecond);
  EXPECT_EQ(budget.meanInterval(), milliseconds(10));
}

TEST(TickBudget, OneExpensiveTickWeighsAnEighthOnceTheAverageIsSettled) {
  TickBudget budget(milliseconds(10), 0.5);
  for (int i = 0; i < 8; ++i) budget.addCycle(40 * kMicrosecond);
  budget.addCycle(840 * kMicrosecond);  // a tick that interned a new stack
  // The average is 40 + (840 - 40) / 8 = 140 us: 28 ms at 0.5 %.
  EXPECT_EQ(budget.meanInterval(), milliseconds(28));
}

TEST(TickBudget, TheIntervalStopsAtItsLongest) {
  TickBudget budget(milliseconds(10), 0.5);
  budget.addCycle(50'000 * kMicrosecond);  // 50 ms of CPU a tick would need 10 s between ticks
  EXPECT_EQ(budget.meanInterval(), TickBudget::kLongestInterval);
}

TEST(TickBudget, ABudgetOfZeroKeepsTheAskedRateWhateverItCosts) {
  TickBudget budget(milliseconds(1), 0);
  for (int i = 0; i < 10; ++i) budget.addCycle(900 * kMicrosecond);
  EXPECT_EQ(budget.meanInterval(), milliseconds(1));
  EXPECT_EQ(budget.stretchedCycles(), 0);
}

TEST(TickBudget, ANegativeCycleCountsAsNone) {
  TickBudget budget(milliseconds(10), 0.5);
  budget.addCycle(-5);
  EXPECT_EQ(budget.cpuNs(), 0);
  EXPECT_EQ(budget.meanInterval(), milliseconds(10));
}

class BudgetEnvironment : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("TORCHSCOPE_SAMPLE_BUDGET"); }
  static SampleBudget read(const char* value) {
    setenv("TORCHSCOPE_SAMPLE_BUDGET", value, 1);
    return sampleBudgetFromEnvironment();
  }
};

TEST_F(BudgetEnvironment, UnsetIsHalfAPercent) {
  unsetenv("TORCHSCOPE_SAMPLE_BUDGET");
  const SampleBudget budget = sampleBudgetFromEnvironment();
  EXPECT_EQ(budget.percent, 0.5);
  EXPECT_TRUE(budget.error.empty());
}

TEST_F(BudgetEnvironment, APercentageFromZeroToAHundredIsTaken) {
  EXPECT_EQ(read("0").percent, 0.0);
  EXPECT_EQ(read("2.5").percent, 2.5);
  EXPECT_EQ(read("100").percent, 100.0);
  EXPECT_TRUE(read("0.1").error.empty());
}

TEST_F(BudgetEnvironment, AnythingElseKeepsTheDefaultAndSaysWhy) {
  for (const char* value : {"cheap", "-1", "101", "nan", "1%", "inf"}) {
    const SampleBudget budget = read(value);
    EXPECT_EQ(budget.percent, 0.5) << value;
    EXPECT_EQ(budget.error, std::string("TORCHSCOPE_SAMPLE_BUDGET=") + value +
                                " is not a percentage from 0 to 100: the stack sampler keeps to 0.5 % of a core")
        << value;
  }
}

}  // namespace
}  // namespace torchscope::collector
