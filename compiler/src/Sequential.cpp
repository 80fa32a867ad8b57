#include "torchscope/compiler/Sequential.h"

#include <algorithm>

namespace torchscope::compiler {

int SequentialRule::looks() const { return std::max(max_runs - min_runs + 1, 1); }

double SequentialRule::lookConfidence() const { return 1.0 - alpha / looks(); }

Judgement judge(const SpeedupInterval& interval, int candidate_runs, const SequentialRule& rule) {
  if (candidate_runs < rule.min_runs) return Judgement::kUndecided;
  const bool last = candidate_runs >= rule.max_runs;
  if (!interval.valid()) return last ? Judgement::kNoChange : Judgement::kUndecided;
  if (interval.ci_high < 1.0) return Judgement::kSlower;
  if (interval.ci_low > 1.0 && interval.estimate >= 1.0 + rule.min_gain) return Judgement::kFaster;
  const bool negligible = interval.ci_low >= 1.0 / (1.0 + rule.min_gain) && interval.ci_high <= 1.0 + rule.min_gain;
  if (negligible || last || interval.ci_low > 1.0) return Judgement::kNoChange;
  return Judgement::kUndecided;
}

std::string_view judgementName(Judgement judgement) {
  switch (judgement) {
    case Judgement::kUndecided: return "undecided";
    case Judgement::kFaster: return "faster";
    case Judgement::kSlower: return "slower";
    case Judgement::kNoChange: return "no change";
  }
  return "undecided";
}

}  // namespace torchscope::compiler
