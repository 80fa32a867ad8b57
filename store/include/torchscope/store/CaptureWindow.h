// The capture window a store holds (docs/FORMAT.md, `run_attributes`): written by the collector when the run was
// recorded in part (`torchscope run --steps/--delay/--duration/--capture-range/--signal-toggle`), read by the analyzer.
#pragma once

#include <string_view>

namespace torchscope::store {

// A JSON object: mode, bounds, the intervals it was open and the steps it kept. Absent: the whole run.
inline constexpr std::string_view kWindowAttribute = "capture.window";

}  // namespace torchscope::store
