// Records of the store (Records.h): the capture window, the part of the run a store kept (docs/collector.md,
// *Capture window*).
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "torchscope/base/Clock.h"
#include "torchscope/store/Table.h"

namespace torchscope::store {

// The window of one process, rewritten at each opening and closing and at exit; no row: the whole run was kept.
struct CaptureWindow {
  std::int64_t pid = 0;
  std::string mode;             // "steps" | "time" | "cuda-profiler" | "signal"
  std::int64_t first_step = 0;  // steps: steps first_step to end_step - 1 are kept
  std::int64_t end_step = -1;   // -1: to the end
  double delay_s = 0;           // time: opened delay_s after the process started
  double duration_s = -1;       // for duration_s; -1: to the end
  std::string signal;           // signal: "SIGUSR2"
  std::string intervals;        // JSON array of [open_ns, close_ns]; close_ns -1 while open
  double open_s = 0;            // seconds it was open, over the closed intervals
  std::int64_t steps = 0;       // steps it kept
  std::int64_t first_kept_step = -1;
  std::int64_t last_kept_step = -1;
  bool operator==(const CaptureWindow&) const = default;

  // The (open_ns, close_ns) pairs of `intervals`.
  [[nodiscard]] std::vector<std::pair<base::Nanos, base::Nanos>> openIntervals() const;

  static constexpr schema::Table kTable{
      .name = "capture_window", .keying = schema::Keying::kReplace, .since_version = 5};
  static constexpr auto columns() {
    using R = CaptureWindow;
    using namespace schema;
    return std::tuple{primaryKey("pid", &R::pid),
                      column("mode", &R::mode),
                      column("first_step", &R::first_step),
                      column("end_step", &R::end_step),
                      column("delay_s", &R::delay_s),
                      column("duration_s", &R::duration_s),
                      column("signal", &R::signal),
                      jsonArray("intervals", &R::intervals),
                      column("open_s", &R::open_s),
                      column("steps", &R::steps),
                      column("first_kept_step", &R::first_kept_step),
                      column("last_kept_step", &R::last_kept_step)};
  }
};

}  // namespace torchscope::store
