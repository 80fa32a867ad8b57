// Host memory of the traced process: RSS read from /proc/self/statm (one pread, a few microseconds) at step ends
// (at most one a sampler period), a low-rate sampler thread that keeps the peak between two of those rows (a step's
// peak is usually inside the step, not at its end), and the memory_samples rows both produce (docs/FORMAT.md).
//
// The peak is sampled rather than read from VmHWM and reset through /proc/self/clear_refs, because a
// reset would also lower the ru_maxrss that a parent (torchscope fix) reads for the whole job.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "Window.h"
#include "torchscope/store/Writer.h"

namespace torchscope::collector {

// Resident set size of this process in bytes, -1 when /proc cannot be read.
[[nodiscard]] std::int64_t currentRssBytes();
// The process's peak RSS so far (VmHWM) in bytes, -1 when unknown.
[[nodiscard]] std::int64_t peakRssBytes();

class HostMemorySampler {
 public:
  // Starts the sampler thread; it writes a between-steps `host.rss` row about every 500 ms while `window` is open
  // (and sleeps while it is closed).
  HostMemorySampler(store::Writer& writer, pid_t pid, std::chrono::milliseconds period, const CaptureWindow& window);
  ~HostMemorySampler();
  HostMemorySampler(const HostMemorySampler&) = delete;
  HostMemorySampler& operator=(const HostMemorySampler&) = delete;

  // `host.rss` and `host.rss_peak` (since the previous row) for the step that ended at ts_ns, unless a step end
  // less than a period before it was read.
  void recordStepEnd(std::int64_t step, std::int64_t ts_ns);
  // The stack sampler's thread, which wakes at least as often, reads the RSS from now on (sampleIfDue): this one's
  // thread ends, and with it its wake-ups (about 30 us of CPU each on the 2-core development VM). Safe to call twice.
  void handTicksOver();
  // Once ticks are handed over: one read when a period has passed since the previous one. Called on one thread.
  void sampleIfDue();
  [[nodiscard]] std::chrono::milliseconds period() const { return period_; }
  // Stops the thread and writes `host.hwm`: VmHWM, or the highest RSS sampled when that is higher (the
  // kernel updates VmHWM lazily). Safe to call twice; recordStepEnd() does nothing afterwards.
  void stop();

 private:
  void run();
  // One read of the RSS while the window is open: the peak, and a between-steps row every 500 ms.
  void sampleOnce();
  void endThread();
  void notePeak(std::int64_t rss);

  store::Writer& writer_;
  const pid_t pid_;
  const std::chrono::milliseconds period_;
  const CaptureWindow& window_;
  std::atomic<std::int64_t> peak_since_step_{-1};
  std::atomic<std::int64_t> peak_of_run_{-1};
  std::atomic<std::int64_t> last_step_read_ns_{-1};  // the step end that last read the RSS
  std::atomic<bool> stopped_{false};
  std::atomic<bool> thread_ends_{false};  // the thread leaves its loop (stop() or handTicksOver())
  std::atomic<bool> handed_over_{false};
  // Of whichever thread samples: this one's, then (once it has ended) the stack sampler's.
  std::chrono::steady_clock::time_point last_row_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_sample_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::mutex join_mutex_;
  std::thread thread_;
};

}  // namespace torchscope::collector
