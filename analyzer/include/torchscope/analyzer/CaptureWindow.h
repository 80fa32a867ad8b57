// The capture window a store holds (docs/FORMAT.md, `capture.window`): which part of the run its steps, syncs,
// kernels and memory figures come from, in the words the reports use.
#pragma once

#include <cstdint>
#include <string>

#include "torchscope/store/Reader.h"

namespace torchscope::analyzer {

struct CaptureWindow {
  std::string mode;         // "" the whole run; "steps", "time", "cuda-profiler", "signal"
  std::string attribute;    // the store's JSON object, as written
  double open_seconds = 0;  // how long the window was open
  std::int64_t steps = 0;   // steps it kept
  std::int64_t first_kept_step = -1;
  std::int64_t last_kept_step = -1;
  [[nodiscard]] bool whole() const { return mode.empty(); }
  // "steps 100:150 (steps 100-149, 50 steps, 3.21 s); compilations: the whole run"; "" for the whole run.
  [[nodiscard]] std::string describe() const;
};

// The store's window; the whole run when it has none (or an unreadable one).
[[nodiscard]] CaptureWindow captureWindowOf(const store::Reader& reader);
[[nodiscard]] CaptureWindow parseCaptureWindow(const std::string& attribute);

}  // namespace torchscope::analyzer
