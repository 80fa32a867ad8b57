// The line table of one store for the analysis (the public side is torchscope/analyzer/LineTable.h).
#pragma once

#include <cstdint>
#include <set>

#include "Rules.h"
#include "torchscope/analyzer/LineTable.h"

namespace torchscope::analyzer {

// A thread is idle over a row of samples (one step, thread and stack) when it ran on a CPU for less than this share
// of the row's wall time: a pool worker waiting on a condition (Inductor's compile workers), a monitor thread asleep.
inline constexpr double kIdleCpuShare = 0.01;

// Which sampled rows the line table and the flame graph count. As py-spy by default, they leave out idle threads; the
// threads that ran the steps always count, since their waiting (for data, a GPU sync, I/O) is the step's time.
class SampleFilter {
 public:
  explicit SampleFilter(const Facts& facts);
  // `cpu_ns` < 0: the CPU time is unknown, and the row counts.
  [[nodiscard]] bool idle(std::int64_t tid, std::int64_t wall_ns, std::int64_t cpu_ns) const;

 private:
  std::set<std::int64_t> step_threads_;
};

// The steady-state steps' samples (every sample when the run has no steady steps), by line of the user's code.
[[nodiscard]] Result<LineTable> buildLineTable(const store::Reader& reader, const Facts& facts,
                                               const store::CodeRoots& code);

}  // namespace torchscope::analyzer
