// The figures and the verdict of a measured variant: every metric's median and 95 % interval
// against the baseline (the noise pooled over all variants), parity over all its runs, its memory
// change, decide() and limitMemory().
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "Runner.h"
#include "torchscope/compiler/Experiment.h"

namespace torchscope::compiler {

// The fix ids an outcome stands for: its members (the combination), else its own id.
[[nodiscard]] std::vector<std::string> fixIdsOf(const FixOutcome& outcome);

// Why a runtime fix could not act on the job (quantize-dynamic on a model torch cannot quantize), from the run's
// launcher report; "" when it could.
[[nodiscard]] std::string notApplicableReason(const RunMeasurement& run, const std::vector<std::string>& fix_ids);

// Parity of `candidate`'s runs (or of its run `only`) with the baseline's: of their kept outputs when the baseline
// kept any (an inference job; two baseline runs give the noise), else of their printed values.
[[nodiscard]] ParityResult parityOver(const Variant& baseline, const Variant& candidate,
                                      const std::vector<std::string>& fix_ids, double tolerance,
                                      std::optional<std::size_t> only = std::nullopt);

// Fills `outcome` for `candidate` measured against `baseline`; `all` are every variant of the
// experiment (their runs pool the noise).
void finishOutcome(FixOutcome& outcome, const Variant& candidate, const Variant& baseline,
                   const std::vector<const Variant*>& all, const FixOptions& options, const SequentialRule& rule,
                   const Metric& verdict);

}  // namespace torchscope::compiler
