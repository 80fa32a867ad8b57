// The figures and the verdict of a measured variant: every metric's median and 95 % interval
// against the baseline (the noise pooled over all variants), parity over all its runs, its memory
// change, decide() and limitMemory().
#pragma once

#include <vector>

#include "Runner.h"
#include "torchscope/compiler/Experiment.h"

namespace torchscope::compiler {

// Fills `outcome` for `candidate` measured against `baseline`; `all` are every variant of the
// experiment (their runs pool the noise).
void finishOutcome(FixOutcome& outcome, const Variant& candidate, const Variant& baseline,
                   const std::vector<const Variant*>& all, const FixOptions& options, const SequentialRule& rule,
                   const Metric& verdict);

}  // namespace torchscope::compiler
