// One pass over the big tables, in storage order (sequential reads, no sort): per-name totals of kernels and CPU
// ops, and the GPU's busy/idle picture in the steady-state window. The rules read the result from Facts.
#pragma once

#include <cstdint>
#include <vector>

#include "torchscope/store/Reader.h"

namespace torchscope::analyzer {

struct Facts;

// An idle gap on a device, with the kernel that ended it.
struct Gap {
  double seconds = 0;
  std::int64_t pid = 0;
  std::int64_t correlation_id = -1;
  store::Nanos previous_end_ns = 0;
  bool operator>(const Gap& other) const { return seconds > other.seconds; }
};

struct KernelWindow {
  std::int64_t kernels = 0;        // kernels that start in the steady-state window
  std::int64_t short_kernels = 0;  // ... shorter than a mean launch call
  double short_kernel_s = 0;
  double idle_s = 0;               // per-device gaps (inside the window) summed over devices
  std::vector<Gap> largest_gaps;   // the largest ones, for classification
};

struct LaunchCost {
  std::int64_t launches = 0;
  double mean_s = 0;
};

// Fills facts.kernel_names, cpu_op_names, small-op counts, launch cost and the kernel window.
[[nodiscard]] Result<void> scanActivity(const store::Reader& reader, Facts& facts);

}  // namespace torchscope::analyzer
