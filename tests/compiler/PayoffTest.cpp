// Where a fix's time goes and the run length at which it pays off: the arithmetic of payoffOf and
// the sentence a person reads.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace torchscope::compiler
