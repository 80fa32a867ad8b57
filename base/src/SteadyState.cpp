#include "torchscope/base/SteadyState.h"

namespace torchscope::base {

std::vector<std::size_t> steadyStepPositions(const std::vector<bool>& compiling, const SteadyStateRule& rule) {
  const std::size_t steps = compiling.size();
  const std::size_t warmup = steps < rule.min_steps_for_warmup ? 0 : std::min(rule.warmup_steps, steps);
  std::vector<std::size_t> steady;
  for (std::size_t i = warmup; i < steps; ++i) {
    if (!compiling[i]) steady.push_back(i);
  }
  if (steady.empty() && rule.all_compiling_fallback) {
    for (std::size_t i = warmup; i < steps; ++i) steady.push_back(i);
  }
  return steady;
}

}  // namespace torchscope::base
