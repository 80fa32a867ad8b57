// The capture window a store holds (docs/FORMAT.md, `capture_window`): which part of the run its steps, syncs,
// kernels and memory figures come from, in the words the reports use.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "torchscope/store/Reader.h"

namespace torchscope::analyzer {

struct CaptureWindow {
  std::string mode;  // "" the whole run; "steps", "time", "cuda-profiler", "signal"
  // How it was asked for: steps first_step to end_step - 1 (-1: to the end); delay_s after the start for
  // duration_s (-1: to the end); the toggle signal.
  std::int64_t first_step = 0;
  std::int64_t end_step = -1;
  double delay_s = 0;
  double duration_s = -1;
  std::string signal;
  std::vector<std::pair<base::Nanos, base::Nanos>> intervals;  // each time it was open; close -1 while open
  double open_seconds = 0;                                     // how long the window was open
  std::int64_t steps = 0;                                      // steps it kept
  std::int64_t first_kept_step = -1;
  std::int64_t last_kept_step = -1;
  [[nodiscard]] bool whole() const { return mode.empty(); }
  // "steps 100:150 (steps 100-149, 50 steps, 3.21 s); compilations: the whole run"; "" for the whole run.
  [[nodiscard]] std::string describe() const;
};

// The store's window; the whole run when it has none.
[[nodiscard]] CaptureWindow captureWindowOf(const store::Reader& reader);
[[nodiscard]] CaptureWindow captureWindowFrom(const store::CaptureWindow& row);
// The window as the JSON reports show it: its mode, the bounds its mode has, the intervals and the steps it kept
// (the keys of docs/FORMAT.md's `capture_window`).
[[nodiscard]] nlohmann::json windowJson(const CaptureWindow& window);

}  // namespace torchscope::analyzer
