// Which fixes can act in an experiment, and whether a fix's effect shows in the store of its first
// run: the checks that keep `torchscope fix` from spending runs on fixes that cannot help.
//
// Error contract: pure functions over measurements; nothing throws.
#pragma once

#include <string>

#include "torchscope/compiler/FixCatalog.h"
#include "torchscope/compiler/Measurement.h"

namespace torchscope::compiler {

// Empty when `fix` can act on the job as `profile` ran it; otherwise why it cannot (the fix is not
// run): the job lacks what it needs (torch.compile, a CUDA device, a compile cache that survives
// between runs), or the run already lacks what the fix would remove.
[[nodiscard]] std::string whyCannotAct(const FixRequest& fix, const RunMeasurement& profile, bool shared_compile_cache);

struct EffectCheck {
  bool checkable = false;  // false: the fix aims at a faster step, which only the timing shows
  bool shown = false;
  double before = 0;       // the counted quantity in the baseline's first run
  double after = 0;        // and in the fix's first run
  std::string text;        // e.g. "fewer shape recompiles: 8 -> 0"
};

// Compares the fix's first run with the baseline's (min_gain: the relative drop that counts for
// compile time, which is a time, not a count).
[[nodiscard]] EffectCheck checkEffect(const FixRequest& fix, const RunMeasurement& baseline,
                                      const RunMeasurement& candidate, double min_gain);

}  // namespace torchscope::compiler
