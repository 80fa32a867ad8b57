// What the stack sampler's own thread may cost: a share of one core. A tick's CPU is mostly fixed (waking a thread
// costs 40-60 us of CPU on the development VM, a few microseconds on bare metal, before any stack is read), so a fixed
// rate costs one machine ten times what it costs another. The sampler measures its thread's CPU over each cycle (the
// wake-up, the tick, the wait's return) and stretches its mean interval past the asked period while the cycles cost
// more than the share earns, as perf lowers its sample rate when its interrupts take too long. The share is earned
// with wall time into an allowance of at most kAllowance, so that a burst (the first ticks, which intern every frame)
// is paid from it rather than by seconds of sparse samples; over any span the thread uses at most the share of it plus
// the allowance. Samples are credited with the wall time since their thread's previous sample, so a longer interval
// costs resolution, not accuracy.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace torchscope::collector {

// With the rest of the collector (the step hooks, the writer: about 0.6 % of a 1.5 ms eager step on the development
// VM), the whole stays within 1 % of the job's CPU (docs/performance.md, *The whole collector within 1 %*).
inline constexpr double kDefaultSampleBudgetPercent = 0.3;

// TORCHSCOPE_SAMPLE_BUDGET: the most of one core the sampler's thread may use, in percent (0.3 when unset; 0: no
// limit, the asked rate whatever it costs). A value that is not a number from 0 to 100 keeps the default, with
// `error` saying so.
struct SampleBudget {
  double percent = kDefaultSampleBudgetPercent;
  std::string error;
};
[[nodiscard]] SampleBudget sampleBudgetFromEnvironment();

class TickBudget {
 public:
  // `period`: the interval asked (1 / TORCHSCOPE_SAMPLE_HZ); `percent`: the share of a core, 0 for no limit.
  TickBudget(std::chrono::nanoseconds period, double percent);

  // The thread's CPU over one cycle and the wall time it spanned, both since the previous call. The cycle's CPU is
  // paid from the allowance, which the wall time refills at the share. The expected cost of a tick is a running
  // average from zero in which each cycle weighs an eighth: one costly tick (the first, which interns every frame)
  // moves it by an eighth of its cost, which the allowance pays, instead of spreading the next ticks by all of it.
  void addCycle(std::int64_t cpu_ns, std::int64_t wall_ns);
  // The mean interval to the next tick: the asked period while the allowance pays for a tick, else as long as it
  // takes the share to earn what is missing (at most kLongestInterval, whatever a tick costs).
  [[nodiscard]] std::chrono::nanoseconds meanInterval() const { return interval_; }

  [[nodiscard]] std::int64_t cycles() const { return cycles_; }
  [[nodiscard]] std::int64_t cpuNs() const { return cpu_ns_; }
  // The cycles whose interval was longer than the asked period.
  [[nodiscard]] std::int64_t stretchedCycles() const { return stretched_; }
  [[nodiscard]] double percent() const { return percent_; }

  static constexpr std::chrono::nanoseconds kLongestInterval = std::chrono::seconds(1);
  // What two seconds earn at the default share: a first tick that interns a job's frames costs a few milliseconds.
  static constexpr std::chrono::nanoseconds kAllowance = std::chrono::milliseconds(10);

 private:
  const std::chrono::nanoseconds period_;
  const double percent_;
  double allowance_ns_ = static_cast<double>(kAllowance.count());  // may fall below 0 by a tick's cost
  double average_cpu_ns_ = 0;
  std::int64_t cycles_ = 0;
  std::int64_t cpu_ns_ = 0;
  std::int64_t stretched_ = 0;
  std::chrono::nanoseconds interval_;
};

}  // namespace torchscope::collector
