// Which steps are steady state: the warm-up, compiling steps, the short-run rule and the all-compiling fallback.
#include "torchscope/base/SteadyState.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace torchscope::base {
namespace {

using Positions = std::vector<std::size_t>;

struct Span {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

TEST(SteadyState, LeavesOutTheWarmupAndCompilingSteps) {
  const std::vector<bool> compiling{true, false, true, false, false};
  EXPECT_EQ(steadyStepPositions(compiling, {.warmup_steps = 1}), (Positions{1, 3, 4}));
  EXPECT_EQ(steadyStepPositions(compiling, {.warmup_steps = 2}), (Positions{3, 4}));
  EXPECT_EQ(steadyStepPositions(compiling, {.warmup_steps = 0}), (Positions{1, 3, 4}));
  EXPECT_EQ(steadyStepPositions({false, false}, {.warmup_steps = 0}), (Positions{0, 1}));
}

TEST(SteadyState, ShortRunsKeepTheirWarmup) {
  const SteadyStateRule rule{.warmup_steps = 1, .min_steps_for_warmup = 3};
  EXPECT_EQ(steadyStepPositions({false, false}, rule), (Positions{0, 1}));
  EXPECT_EQ(steadyStepPositions({false, false, false}, rule), (Positions{1, 2}));
  EXPECT_EQ(steadyStepPositions({false}, {.warmup_steps = 1, .min_steps_for_warmup = 2}), (Positions{0}));
  EXPECT_EQ(steadyStepPositions({false}, {.warmup_steps = 1}), Positions{});
  EXPECT_EQ(steadyStepPositions({}, rule), Positions{});
}

TEST(SteadyState, EveryStepCompilingFallsBackToAllAfterWarmupOrNone) {
  const std::vector<bool> compiling{true, true, true};
  EXPECT_EQ(steadyStepPositions(compiling, {.warmup_steps = 1}), Positions{});
  EXPECT_EQ(steadyStepPositions(compiling, {.warmup_steps = 1, .all_compiling_fallback = true}), (Positions{1, 2}));
  EXPECT_EQ(steadyStepPositions(compiling, {.warmup_steps = 5, .all_compiling_fallback = true}), Positions{});
}

TEST(SteadyState, CompilingStepsAreThoseACompilationOverlaps) {
  const std::vector<Span> steps{{0, 10}, {10, 20}, {20, 30}, {30, 40}};
  const std::vector<Span> compiles{{5, 12}, {30, 31}};
  EXPECT_EQ(compilingSteps(steps, compiles), (std::vector<bool>{true, true, false, true}));
  // Touching ends do not overlap.
  EXPECT_EQ(compilingSteps(steps, std::vector<Span>{{20, 20}, {40, 50}}),
            (std::vector<bool>{false, false, false, false}));
  EXPECT_EQ(compilingSteps(steps, std::vector<Span>{}), (std::vector<bool>(4, false)));
}

}  // namespace
}  // namespace torchscope::base
