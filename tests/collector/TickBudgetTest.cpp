// The stack sampler's budget (TickBudget.h): the interval it keeps between ticks for what they cost, and
// TORCHSCOPE_SAMPLE_BUDGET read from the environment.
#include "TickBudget.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <random>

namespace torchscope::collector {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr std::int64_t kMicrosecond = 1'000;

TEST(TickBudget, CheapTicksKeepTheAskedPeriod) {
  TickBudget budget(milliseconds(10), 0.5);
  for (int i = 0; i < 50; ++i) budget.addCycle(40 * kMicrosecond, 10'000 * kMicrosecond);  // 0.4 % of a core
  EXPECT_EQ(budget.meanInterval(), milliseconds(10));
  EXPECT_EQ(budget.stretchedCycles(), 0);
  EXPECT_EQ(budget.cycles(), 50);
  EXPECT_EQ(budget.cpuNs(), 50 * 40 * kMicrosecond);
}

// Each cycle spans the interval the budget chose before it.
void runCycles(TickBudget& budget, int cycles, std::int64_t cpu_ns) {
  for (int i = 0; i < cycles; ++i) budget.addCycle(cpu_ns, budget.meanInterval().count());
}

TEST(TickBudget, TicksThatCostMoreThanTheShareAreSpreadOnceTheAllowanceIsSpent) {
  TickBudget budget(milliseconds(10), 0.5);
  // 100 us every 10 ms spends 50 us a cycle more than 0.5 % earns: the 10 ms allowance lasts about 200 cycles (the
  // expected cost, an average from zero, reaches 100 us within the first 40).
  runCycles(budget, 150, 100 * kMicrosecond);
  EXPECT_EQ(budget.meanInterval(), milliseconds(10));
  EXPECT_EQ(budget.stretchedCycles(), 0);
  runCycles(budget, 600, 100 * kMicrosecond);
  // Then 100 us every 20 ms: 0.5 % of a core.
  EXPECT_NEAR(static_cast<double>(budget.meanInterval().count()), 20e6, 1e3);
  EXPECT_NEAR(static_cast<double>(budget.stretchedCycles()), 550, 10);  // from about the 200th cycle on
  // Cheaper ticks bring the asked period back.
  runCycles(budget, 40, 10 * kMicrosecond);
  EXPECT_EQ(budget.meanInterval(), milliseconds(10));
}

TEST(TickBudget, AnExpensiveFirstTickIsPaidFromTheAllowance) {
  TickBudget budget(milliseconds(10), 0.5);
  budget.addCycle(4'000 * kMicrosecond, 10'000 * kMicrosecond);  // a first tick that interned every frame
  EXPECT_EQ(budget.meanInterval(), milliseconds(10));
  runCycles(budget, 20, 40 * kMicrosecond);
  EXPECT_EQ(budget.meanInterval(), milliseconds(10));
  EXPECT_EQ(budget.stretchedCycles(), 0);
}

TEST(TickBudget, TheIntervalStopsAtItsLongest) {
  TickBudget budget(milliseconds(10), 0.5);
  budget.addCycle(50'000 * kMicrosecond, 10'000 * kMicrosecond);  // 40 ms beyond the allowance: 8 s to earn
  EXPECT_EQ(budget.meanInterval(), TickBudget::kLongestInterval);
}

TEST(TickBudget, OverAnySpanTheThreadUsesTheShareOfItAndTheAllowanceAtMost) {
  TickBudget budget(milliseconds(1), 0.5);
  std::mt19937 random(7);
  std::uniform_int_distribution<std::int64_t> cost_us(20, 3'000);
  double cpu_ns = 0;
  double wall_ns = 0;
  std::int64_t largest_ns = 0;
  for (int i = 0; i < 20'000; ++i) {
    const std::int64_t cost_ns = cost_us(random) * kMicrosecond;
    const std::int64_t span_ns = budget.meanInterval().count();
    budget.addCycle(cost_ns, span_ns);
    cpu_ns += static_cast<double>(cost_ns);
    wall_ns += static_cast<double>(span_ns);
    largest_ns = std::max(largest_ns, cost_ns);
  }
  EXPECT_LE(cpu_ns, 0.005 * wall_ns + static_cast<double>(TickBudget::kAllowance.count() + largest_ns));
  // And it does not give up more than a tick of what it may use.
  EXPECT_GE(cpu_ns, 0.005 * wall_ns - static_cast<double>(largest_ns));
}

TEST(TickBudget, ABudgetOfZeroKeepsTheAskedRateWhateverItCosts) {
  TickBudget budget(milliseconds(1), 0);
  for (int i = 0; i < 10; ++i) budget.addCycle(900 * kMicrosecond, kMicrosecond);
  EXPECT_EQ(budget.meanInterval(), milliseconds(1));
  EXPECT_EQ(budget.stretchedCycles(), 0);
}

TEST(TickBudget, ANegativeCycleCountsAsNone) {
  TickBudget budget(milliseconds(10), 0.5);
  budget.addCycle(-5, -5);
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

TEST_F(BudgetEnvironment, UnsetIsAThirdOfAPercent) {
  unsetenv("TORCHSCOPE_SAMPLE_BUDGET");
  const SampleBudget budget = sampleBudgetFromEnvironment();
  EXPECT_EQ(budget.percent, 0.3);
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
    EXPECT_EQ(budget.percent, 0.3) << value;
    EXPECT_EQ(budget.error, std::string("TORCHSCOPE_SAMPLE_BUDGET=") + value +
                                " is not a percentage from 0 to 100: the stack sampler keeps to 0.3 % of a core")
        << value;
  }
}

}  // namespace
}  // namespace torchscope::collector
