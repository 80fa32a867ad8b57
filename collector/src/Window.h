// The capture window: the part of the run whose steps, syncs, collectives, memory and GPU records are kept.
// Compile events (compiles, graph breaks, recompiles) and the run's metadata are kept whatever the window, since a
// recompile before the window is a cause of what happens in it. Set through the environment (docs/collector.md,
// *Capture window*), as `torchscope run --steps/--delay/--duration/--capture-range/--signal-toggle` sets it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "torchscope/store/Records.h"

namespace torchscope::collector {

enum class WindowMode { kWhole, kSteps, kTime, kCudaProfiler, kSignal };

struct WindowSettings {
  WindowMode mode = WindowMode::kWhole;
  std::int64_t first_step = 0;    // kSteps: steps [first_step, end_step) are kept
  std::int64_t end_step = -1;     // -1: to the end of the run
  std::int64_t delay_ns = 0;      // kTime: opens this long after the process started
  std::int64_t duration_ns = -1;  // kTime: and stays open this long (-1: to the end)
  std::string error;              // a malformed setting: the whole run is recorded and a diagnostic says why
};

// TORCHSCOPE_WINDOW_STEPS ("A:B" or "A:"), TORCHSCOPE_WINDOW_DELAY_S / TORCHSCOPE_WINDOW_DURATION_S (seconds),
// TORCHSCOPE_WINDOW_CAPTURE_RANGE=cuda-profiler, TORCHSCOPE_WINDOW_SIGNAL=1; at most one mode.
[[nodiscard]] WindowSettings windowSettingsFromEnvironment();
[[nodiscard]] const char* windowModeName(WindowMode mode);

class CaptureWindow {
 public:
  // Called on every change (open or closed), on the thread that made it; never from a signal handler.
  using Listener = void (*)(bool open);

  // Starts the window of a process whose store opened at `start_ns`: closed from the start unless the mode opens it
  // there; a time window starts its timer thread, a signal window its SIGUSR2 handler.
  void begin(const WindowSettings& settings, std::int64_t start_ns, Listener listener);
  [[nodiscard]] bool isOpen() const { return open_.load(std::memory_order_relaxed); }
  [[nodiscard]] WindowMode mode() const { return settings_.mode; }
  // A step ended at `end_ns`: whether its row is kept (steps window: its index is inside; otherwise: the window is
  // open). A steps window opens when step first_step-1 ends and closes when step end_step-1 ends.
  bool admitStep(std::int64_t index, std::int64_t end_ns);
  // cudaProfilerStart/Stop (cuda-profiler mode) or a toggle signal (signal mode); ignored in other modes.
  void profilerRange(bool start, std::int64_t at_ns);
  void toggle(std::int64_t at_ns);
  // Blocks the calling thread (a side thread of the collector) while the window is closed, so that it costs nothing
  // outside the window, until the window opens or `stop` is set and wakeWaiters() called.
  void waitWhileClosed(const std::atomic<bool>& stop) const;
  void wakeWaiters() const;
  // The run ends: an open interval ends here.
  void end(std::int64_t at_ns);
  // The store's `capture_window` row (docs/FORMAT.md); nullopt for a whole-run window.
  [[nodiscard]] std::optional<store::CaptureWindow> record() const;

 private:
  void setOpen(bool open, std::int64_t at_ns);
  void runTimer(std::int64_t start_ns);

  WindowSettings settings_;
  Listener listener_ = nullptr;
  std::atomic<bool> open_{true};
  mutable std::mutex mutex_;                                      // guards what follows
  std::vector<std::pair<std::int64_t, std::int64_t>> intervals_;  // [open, close), close -1 while open
  std::int64_t steps_kept_ = 0;
  std::int64_t first_kept_ = -1;
  std::int64_t last_kept_ = -1;
  bool ended_ = false;
  // Bumped when the window opens and by wakeWaiters(); waited on with atomic wait (a futex), not a condition variable:
  // a fork() child inherits a condition variable's waiters from the parent's threads, and glibc's notify can wait
  // for them forever, where a futex wake never blocks.
  mutable std::atomic<std::uint32_t> wake_generation_{0};
};

// The job set its own handler for the toggle signal (Python's signal.signal): put the window's handler back in front
// of it, chaining to it, so that both run. Does nothing unless a signal window is on.
void rechainToggleSignal();

}  // namespace torchscope::collector
