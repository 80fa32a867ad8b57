// Which steps of a run are its steady state: what a step costs once the job is warm. The first steps compile,
// fill caches and allocate (warm-up); a step that a compilation overlaps (a recompile) measures the compiler.
// Steady state is every step after the warm-up that no compilation overlaps. Pure functions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace torchscope::base {

struct SteadyStateRule {
  std::size_t warmup_steps = 1;  // the run's first steps, left out
  // A run with fewer steps than this keeps its warm-up steps (too short to give any up); 0: never.
  std::size_t min_steps_for_warmup = 0;
  // When every step after the warm-up overlaps a compilation: true takes them all, false none.
  bool all_compiling_fallback = false;
};

// Positions, in run order, of the steady-state steps, given for each step whether a compilation overlaps it.
[[nodiscard]] std::vector<std::size_t> steadyStepPositions(const std::vector<bool>& compiling,
                                                           const SteadyStateRule& rule);

// Whether the spans [a.start_ns, a.end_ns) and [b.start_ns, b.end_ns) share time.
template <typename A, typename B>
[[nodiscard]] bool spansOverlap(const A& a, const B& b) {
  return b.start_ns < a.end_ns && b.end_ns > a.start_ns;
}

// For each step, whether one of `compilations` overlaps it (both with start_ns and end_ns).
template <typename Step, typename Compilation>
[[nodiscard]] std::vector<bool> compilingSteps(const std::vector<Step>& steps,
                                               const std::vector<Compilation>& compilations) {
  std::vector<bool> compiling;
  compiling.reserve(steps.size());
  for (const auto& step : steps) {
    compiling.push_back(std::any_of(compilations.begin(), compilations.end(),
                                    [&](const Compilation& compilation) { return spansOverlap(step, compilation); }));
  }
  return compiling;
}

}  // namespace torchscope::base
