// The sequential design of `torchscope fix`: how many runs a variant gets and when it stops.
//
// A variant is looked at after each of its runs from `min_runs` on. It stops as soon as the
// interval of its speed-up excludes "no change" (faster or slower), or lies wholly inside the band
// of changes too small to matter (±min_gain), or when `max_runs` is reached. Every look uses the
// same interval, at the Bonferroni level 1 - alpha / looks, so that the chance of declaring a
// change that is not there stays below alpha over all looks together (checked on simulated runs
// in tests/compiler/SequentialTest.cpp).
//
// Error contract: pure functions.
#pragma once

#include <string_view>

#include "torchscope/compiler/Statistics.h"

namespace torchscope::compiler {

struct SequentialRule {
  int min_runs = 2;        // an interval needs two runs on each side
  int max_runs = 5;
  double alpha = 0.05;     // family-wise error rate over every look
  double min_gain = 0.02;  // smaller changes are "no change"
  [[nodiscard]] int looks() const;
  [[nodiscard]] double lookConfidence() const;  // 1 - alpha / looks
};

enum class Judgement {
  kUndecided,  // run it again
  kFaster,     // interval wholly above 1 and the estimate at least 1 + min_gain
  kSlower,     // interval wholly below 1
  kNoChange,   // interval inside the ±min_gain band, or max_runs reached without a decision
};

// The judgement after `candidate_runs` runs, from the interval at rule.lookConfidence().
[[nodiscard]] Judgement judge(const SpeedupInterval& interval, int candidate_runs, const SequentialRule& rule);

[[nodiscard]] std::string_view judgementName(Judgement judgement);

}  // namespace torchscope::compiler
