// Where the bridge's training steps end (StepMarks.h), on the sequences of calls training loops make.
#include "StepMarks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace torchscope::collector {
namespace {

constexpr StepMarks::OptimizerId kOptimizer = 0x7f00'1000;
constexpr StepMarks::OptimizerId kOtherOptimizer = 0x7f00'2000;

// The events of a loop at times 10, 20, 30, ...; the steps they ended as (index, source).
class Loop {
 public:
  void optimizerStep(StepMarks::OptimizerId optimizer = kOptimizer) { keep(marks.optimizerStepped(optimizer, tick())); }
  void zeroGrad(StepMarks::OptimizerId optimizer = kOptimizer) { keep(marks.zeroGrad(optimizer, tick())); }
  void backward() { keep(marks.backward(tick())); }
  void marker() { keep(marks.marker(tick())); }
  // A request that started 5 ns before now.
  void request(std::int64_t items = 8, bool marked = false) {
    const std::int64_t now = tick();
    keep(marks.request(now - 5, now, items, marked));
  }
  void flushRequest() { keep(marks.flushRequest()); }

  StepMarks marks;
  std::vector<std::pair<std::int64_t, std::string>> ended;
  std::vector<EndedStep> steps;

 private:
  std::int64_t tick() { return now_ += 10; }
  void keep(const std::optional<EndedStep>& step) {
    if (!step) return;
    ended.emplace_back(step->index, step->source);
    steps.push_back(*step);
  }
  std::int64_t now_ = 0;
};

using Ended = std::vector<std::pair<std::int64_t, std::string>>;

TEST(StepMarks, BackwardMarksStepsWhenNoOptimizerIsUsed) {
  Loop loop;
  for (int i = 0; i < 4; ++i) loop.backward();
  EXPECT_EQ(loop.ended, (Ended{{0, "backward"}, {1, "backward"}, {2, "backward"}}));
  // A step spans two marks: the first only started step 0.
  EXPECT_EQ(loop.steps[0].start_ns, 10);
  EXPECT_EQ(loop.steps[0].end_ns, 20);
  EXPECT_EQ(loop.steps[2].start_ns, 30);
  EXPECT_EQ(loop.steps[2].end_ns, 40);
}

TEST(StepMarks, AnOptimizerLoopWithoutZeroGradCountsFromItsFirstStep) {
  // forward, backward, step: the first backward only started a step, which the optimizer does not inherit.
  Loop loop;
  for (int i = 0; i < 4; ++i) {
    loop.backward();
    loop.optimizerStep();
  }
  EXPECT_EQ(loop.ended, (Ended{{0, "optimizer"}, {1, "optimizer"}, {2, "optimizer"}}));
  EXPECT_EQ(loop.steps[0].start_ns, 20);  // the first optimizer step's end
  EXPECT_EQ(loop.steps[0].end_ns, 40);
}

TEST(StepMarks, AnOptimizerLoopWithZeroGradCountsTheSame) {
  Loop loop;
  for (int i = 0; i < 3; ++i) {
    loop.zeroGrad();
    loop.backward();
    loop.optimizerStep();
  }
  EXPECT_EQ(loop.ended, (Ended{{0, "optimizer"}, {1, "optimizer"}, {2, "optimizer"}}));
  EXPECT_EQ(loop.steps[0].start_ns, 10);  // step 0 starts at the first zero_grad()
}

TEST(StepMarks, ZeroGradMarksStepsWhileNoOptimizerStepIsSeen) {
  // A loop whose optimizer steps in compiled code (no post-hook), until the compiled step is seen.
  Loop loop;
  for (int i = 0; i < 3; ++i) {
    loop.zeroGrad();
    loop.backward();
  }
  EXPECT_EQ(loop.ended, (Ended{{0, "zero_grad"}, {1, "zero_grad"}}));
  loop.optimizerStep();
  loop.zeroGrad();
  loop.optimizerStep();
  EXPECT_EQ(loop.ended, (Ended{{0, "zero_grad"}, {1, "zero_grad"}, {2, "optimizer"}, {3, "optimizer"}}));
}

TEST(StepMarks, OnlyTheFirstOptimizersZeroGradMarksSteps) {
  Loop loop;
  for (int i = 0; i < 3; ++i) {
    loop.zeroGrad(kOptimizer);
    loop.zeroGrad(kOtherOptimizer);
  }
  EXPECT_EQ(loop.ended, (Ended{{0, "zero_grad"}, {1, "zero_grad"}}));
}

TEST(StepMarks, BackwardStepsOfAWarmUpStayAndTheOptimizerGoesOnFromThem) {
  Loop loop;
  for (int i = 0; i < 3; ++i) loop.backward();
  for (int i = 0; i < 3; ++i) {
    loop.backward();
    loop.optimizerStep();
  }
  // The first backward() of the optimizer's loop still ends a warm-up step; the optimizer's first step only starts
  // its own.
  EXPECT_EQ(loop.ended, (Ended{{0, "backward"}, {1, "backward"}, {2, "backward"}, {3, "optimizer"}, {4, "optimizer"}}));
}

TEST(StepMarks, TheFirstOptimizerToStepMarksTheSteps) {
  // A GAN's two optimizers: one step each a training step.
  Loop loop;
  for (int i = 0; i < 4; ++i) {
    loop.optimizerStep(kOptimizer);
    loop.optimizerStep(kOtherOptimizer);
    loop.zeroGrad(kOtherOptimizer);
  }
  EXPECT_EQ(loop.ended, (Ended{{0, "optimizer"}, {1, "optimizer"}, {2, "optimizer"}}));
  EXPECT_EQ(loop.steps[1].end_ns - loop.steps[1].start_ns, 30);
}

TEST(StepMarks, MarkersReplaceEveryOtherMark) {
  Loop loop;
  loop.marker();
  loop.backward();
  loop.optimizerStep();
  loop.zeroGrad();
  loop.marker();
  EXPECT_EQ(loop.ended, (Ended{{0, "marker"}}));
  EXPECT_EQ(loop.steps[0].start_ns, 10);
  EXPECT_EQ(loop.steps[0].end_ns, 50);
  EXPECT_EQ(loop.marks.nextIndex(), 1);
}

TEST(StepMarks, TheFollowUpIsDueFromTheStepAskedFor) {
  StepMarks marks;
  // Every step, inside the capture window or not, until the bridge says otherwise.
  EXPECT_TRUE(marks.followUpDue(0, true));
  EXPECT_TRUE(marks.followUpDue(0, false));
  marks.followUpFrom(64, false);
  EXPECT_FALSE(marks.followUpDue(63, true));
  EXPECT_TRUE(marks.followUpDue(64, true));
  EXPECT_TRUE(marks.followUpDue(1000, true));
  EXPECT_FALSE(marks.followUpDue(1000, false));  // outside the window: not asked for
  marks.followUpFrom(0, true);
  EXPECT_TRUE(marks.followUpDue(5, false));
}

TEST(StepMarks, ZeroGradAndBackwardNoLongerMarkOnceAnOptimizerOrAMarkerTookOver) {
  Loop loop;
  const auto can_mark = [&] { return std::pair{loop.marks.zeroGradCanMark(), loop.marks.backwardCanMark()}; };
  EXPECT_EQ(can_mark(), std::pair(true, true));
  loop.backward();
  EXPECT_EQ(can_mark(), std::pair(true, true));
  loop.zeroGrad();  // an optimizer is used: backward() marks no more, zero_grad() until its first step
  EXPECT_EQ(can_mark(), std::pair(true, false));
  loop.optimizerStep();
  EXPECT_EQ(can_mark(), std::pair(false, false));
  loop.marks.reset();
  EXPECT_EQ(can_mark(), std::pair(true, true));
  loop.marker();
  EXPECT_EQ(can_mark(), std::pair(false, false));
}

TEST(StepMarks, AForkChildStartsAfresh) {
  Loop loop;
  for (int i = 0; i < 3; ++i) loop.optimizerStep(kOptimizer);
  loop.marks.followUpFrom(1 << 30, false);
  loop.marks.reset();
  EXPECT_EQ(loop.marks.nextIndex(), 0);
  EXPECT_TRUE(loop.marks.followUpDue(0, false));
  loop.ended.clear();
  for (int i = 0; i < 3; ++i) loop.backward();  // the child's loop uses no optimizer
  EXPECT_EQ(loop.ended, (Ended{{0, "backward"}, {1, "backward"}}));
}

TEST(StepMarks, ThreadsMarkingAtOnceEachGetTheirOwnIndexAndStart) {
  StepMarks marks;
  constexpr int kThreads = 4;
  constexpr int kMarksEach = 2'000;
  std::vector<std::vector<EndedStep>> ended(kThreads);
  std::vector<std::thread> threads;
  std::atomic<std::int64_t> clock{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kMarksEach; ++i) {
        if (auto step = marks.marker(clock.fetch_add(1) + 1)) ended[t].push_back(*step);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<std::int64_t> indices;
  std::set<std::int64_t> starts;
  for (const auto& steps : ended) {
    for (const EndedStep& step : steps) {
      indices.insert(step.index);
      starts.insert(step.start_ns);
    }
  }
  constexpr std::size_t kSteps = kThreads * kMarksEach - 1;  // the first mark only starts step 0
  EXPECT_EQ(indices.size(), kSteps);
  EXPECT_EQ(starts.size(), kSteps);
  EXPECT_EQ(*indices.rbegin(), static_cast<std::int64_t>(kSteps) - 1);
  EXPECT_EQ(marks.nextIndex(), static_cast<std::int64_t>(kSteps));
}

TEST(StepMarks, RequestsAreStepsOfTheirOwnCallsRecordedOnceTheNextStarts) {
  Loop loop;
  for (int i = 0; i < 3; ++i) loop.request(i < 2 ? 8 : 3);
  EXPECT_EQ(loop.ended, (Ended{{0, "request"}, {1, "request"}}));
  loop.flushRequest();
  EXPECT_EQ(loop.ended, (Ended{{0, "request"}, {1, "request"}, {2, "request"}}));
  // The call's own span, not the time since the previous request: a serving loop's wait is no request's.
  EXPECT_EQ(loop.steps[1].start_ns, 15);
  EXPECT_EQ(loop.steps[1].end_ns, 20);
  EXPECT_EQ(loop.marks.requestItems(), (std::vector<RequestItems>{{0, 8}, {2, 3}}));
  loop.flushRequest();
  EXPECT_EQ(loop.ended.size(), 3U);
}

TEST(StepMarks, ATrainingJobsFirstForwardIsNoRequest) {
  Loop loop;
  loop.request();  // the first forward, before the first backward()
  loop.backward();
  EXPECT_FALSE(loop.marks.requestCanMark());
  loop.request();
  loop.backward();
  loop.flushRequest();
  EXPECT_EQ(loop.ended, (Ended{{0, "backward"}}));
}

TEST(StepMarks, AnOptimizerOrAStepMarkerEndsRequests) {
  Loop with_optimizer;
  with_optimizer.request();
  with_optimizer.zeroGrad();
  with_optimizer.request();
  with_optimizer.flushRequest();
  EXPECT_TRUE(with_optimizer.ended.empty());
  EXPECT_FALSE(with_optimizer.marks.requestCanMark());

  Loop with_marker;
  with_marker.request();
  with_marker.request();
  with_marker.marker();
  with_marker.request();
  with_marker.flushRequest();
  EXPECT_EQ(with_marker.ended, (Ended{{0, "request"}}));  // recorded before the marker took over
}

TEST(StepMarks, RequestBlocksReplaceTheDetectedCalls) {
  Loop loop;
  loop.request(8, false);  // the module call inside the first block
  loop.request(8, true);   // the block itself
  loop.request(8, false);
  loop.request(8, true);
  loop.flushRequest();
  ASSERT_EQ(loop.ended, (Ended{{0, "request"}, {1, "request"}}));
  EXPECT_EQ(loop.steps[0].end_ns, 20);
  EXPECT_EQ(loop.steps[1].end_ns, 40);
}

TEST(StepMarks, AForkChildsRequestsStartAfresh) {
  Loop loop;
  loop.request();
  loop.backward();
  loop.marks.reset();
  EXPECT_TRUE(loop.marks.requestCanMark());
  loop.request(4);
  loop.flushRequest();
  EXPECT_EQ(loop.ended, (Ended{{0, "request"}}));
  EXPECT_EQ(loop.marks.requestItems(), (std::vector<RequestItems>{{0, 4}}));
}

}  // namespace
}  // namespace torchscope::collector
