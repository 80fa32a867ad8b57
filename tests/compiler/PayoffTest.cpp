// Where a fix's time goes and the run length at which it pays off: the arithmetic of payoffOf and
// the sentence a person reads; per compiled region, the fix report's verdict in words (CompileWorth).
#include <gtest/gtest.h>

#include "torchscope/compiler/CompileWorth.h"
#include "torchscope/compiler/Experiment.h"

namespace torchscope::compiler {
namespace {

VariantStats timed(double compile_cpu_s, double step_cpu_s, SpeedupInterval step_speedup = {}) {
  VariantStats stats;
  stats.metrics["compile_cpu"].median_s = compile_cpu_s;
  stats.metrics["steady_step_cpu"].median_s = step_cpu_s;
  stats.metrics["steady_step_cpu"].speedup = step_speedup;
  return stats;
}

// The example: 64 s of compile saved, 0.9 ms a step lost: 64 / 0.0009 = 71,111 steps.
TEST(Payoff, SavesCompileCostsStepsPaysOffBelowTheBreakEven) {
  const Payoff payoff = payoffOf(timed(100.0, 0.0100), timed(36.0, 0.0109, {0.917, 0.90, 0.93}), Clock::kCpu);
  EXPECT_EQ(payoff.clock, "cpu");
  EXPECT_NEAR(payoff.compile_saved_s, 64.0, 1e-9);
  EXPECT_NEAR(payoff.step_saved_s, -0.0009, 1e-12);
  EXPECT_EQ(payoff.when, "below");
  EXPECT_NEAR(payoff.steps, 64.0 / 0.0009, 1e-6);
  EXPECT_TRUE(payoff.stepsSlower(0.02));
  EXPECT_EQ(payoff.text(),
            "saves 64 s of compile CPU time, costs 0.9 ms a step (0.917x [0.900, 0.930]): worth it "
            "below 71,000 steps");
}

TEST(Payoff, CostsCompileSavesStepsPaysOffAboveTheBreakEven) {
  const Payoff payoff = payoffOf(timed(2.0, 0.050), timed(5.0, 0.040, {1.25, 1.2, 1.3}), Clock::kCpu);
  EXPECT_EQ(payoff.when, "above");
  EXPECT_NEAR(payoff.steps, 300.0, 1e-9);  // 3 s more compile / 10 ms saved a step
  EXPECT_FALSE(payoff.stepsSlower(0.02));
  EXPECT_EQ(payoff.text(),
            "costs 3.0 s of compile CPU time, saves 10 ms a step (1.250x [1.200, 1.300]): worth it "
            "above 300 steps");
}

TEST(Payoff, BothBetterIsAlwaysBothWorseIsNever) {
  EXPECT_EQ(payoffOf(timed(10.0, 0.02), timed(4.0, 0.019), Clock::kCpu).when, "always");
  EXPECT_EQ(payoffOf(timed(4.0, 0.02), timed(10.0, 0.021), Clock::kCpu).when, "never");
  // An undecided step interval is named as such beside its estimate.
  const Payoff within = payoffOf(timed(10.0, 0.02), timed(4.0, 0.0201, {0.995, 0.97, 1.02}), Clock::kCpu);
  EXPECT_FALSE(within.stepsSlower(0.02));
  EXPECT_NE(within.text().find("within noise"), std::string::npos) << within.text();
}

TEST(Payoff, AJobWithoutStepsOrCompilesHasNoPayoffOrZeroCompile) {
  VariantStats no_steps;
  no_steps.metrics["end_to_end_cpu"].median_s = 3.0;
  EXPECT_FALSE(payoffOf(no_steps, no_steps, Clock::kCpu).known());
  // Eager job (no compile figures): the compile part is zero, the steps decide.
  VariantStats eager_base;
  eager_base.metrics["steady_step_wall"].median_s = 0.010;
  VariantStats eager_fix;
  eager_fix.metrics["steady_step_wall"].median_s = 0.008;
  const Payoff payoff = payoffOf(eager_base, eager_fix, Clock::kWall);
  EXPECT_EQ(payoff.clock, "wall");
  EXPECT_EQ(payoff.compile_saved_s, 0.0);
  EXPECT_EQ(payoff.when, "always");
}

analyzer::Region timedRegion(const std::string& name, double compiled_s, double eager_s, std::int64_t calls) {
  analyzer::Region region;
  region.region = 1;
  region.name = name;
  region.calls = calls;
  region.compile_s = 6.93;
  region.wall_per_call_s = compiled_s;
  region.eager_wall_per_call_s = eager_s;
  region.speedup = eager_s / compiled_s;
  region.payoff_calls = eager_s > compiled_s ? region.compile_s / (eager_s - compiled_s) : -1;
  region.saved_s = (eager_s - compiled_s) * static_cast<double>(calls);
  return region;
}

// Regions slower compiled lost time: the verdict says how much, as `advise --regions` does, never "saved 0 s".
TEST(CompileWorth, RegionsSlowerCompiledRanSlowerBySoMuch) {
  CompileWorth worth;
  worth.compile_s = 6.93;
  worth.regions = {timedRegion("Sequential.forward", 262.1e-6, 118.3e-6, 30)};
  worth.saved_s = worth.regions.front().saved_s;
  const std::string verdict = worth.verdict();
  EXPECT_NE(verdict.find("the compiled regions ran 4.31 ms slower over this run's calls"), std::string::npos)
      << verdict;
  EXPECT_EQ(verdict.find("saved"), std::string::npos) << verdict;
  EXPECT_FALSE(worth.pays());
}

// A region faster compiled that this run called too few times would pay off later, not "pays off" now.
TEST(CompileWorth, ARegionThatDidNotRepayItsCompileWouldPayOffLater) {
  CompileWorth worth;
  worth.compile_s = 6.93;
  worth.regions = {timedRegion("chain", 0.010, 0.030, 40)};  // 6.93 s / 20 ms = 346.5 calls
  worth.saved_s = worth.regions.front().saved_s;
  std::string verdict = worth.verdict();
  EXPECT_NE(verdict.find("the compiled regions saved 800.00 ms over this run's calls"), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("(3.00x, would pay off after 347 calls; this run made 40)"), std::string::npos) << verdict;
  worth.regions = {timedRegion("chain", 0.010, 0.030, 400)};
  worth.saved_s = worth.regions.front().saved_s;
  verdict = worth.verdict();
  EXPECT_TRUE(worth.pays());
  EXPECT_NE(verdict.find("(3.00x, paid off after 347 calls; this run made 400)"), std::string::npos) << verdict;
}

}  // namespace
}  // namespace torchscope::compiler
