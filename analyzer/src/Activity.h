// One pass over the big tables, in storage order (sequential reads, no sort): per-name totals of kernels and CPU
// ops, the GPU's busy/idle picture in the steady-state window, the rank's collectives and the CPU ops that
// attention/manual reads. The rules and the multi-rank analysis read the result from Facts.
#pragma once

#include <cstdint>
#include <vector>

#include "Collectives.h"
#include "torchscope/store/Reader.h"

namespace torchscope::analyzer {

struct Facts;

// An idle gap on a device, with the kernel or copy that ended it.
struct Gap {
  double seconds = 0;
  std::int64_t pid = 0;
  std::int64_t correlation_id = -1;
  base::Nanos previous_end_ns = 0;
  bool operator>(const Gap& other) const { return seconds > other.seconds; }
};

// One device that ran work (a kernel, copy or memset) in the window.
struct DeviceActivity {
  std::int64_t device = -1;
  std::int64_t kernels = 0;  // kernels that start in the window
  double busy_s = 0;         // union of its kernels, copies and memsets, clipped to the window
  double idle_s = 0;         // the rest of the window
};

struct KernelWindow {
  base::Nanos begin_ns = 0;
  base::Nanos end_ns = 0;
  std::int64_t kernels = 0;        // kernels that start in the window
  std::int64_t short_kernels = 0;  // ... shorter than a mean launch call
  double short_kernel_s = 0;
  double idle_s = 0;               // per-device idle time summed over `devices`
  std::vector<DeviceActivity> devices;  // by device id; devices without work in the window are not listed
  std::vector<Gap> largest_gaps;   // the largest ones, for classification
};

// A matmul or softmax CPU op (the names attention/manual looks for).
struct AttentionOp {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  bool softmax = false;
};

struct LaunchCost {
  std::int64_t launches = 0;
  double mean_s = 0;
};

// Fills facts.kernel_names, cpu_op_names, small-op counts, launch cost, the kernel window
// (over [facts.steady_begin_ns, facts.steady_end_ns)), collectives and attention_ops.
[[nodiscard]] Result<void> scanActivity(const store::Reader& reader, Facts& facts);

}  // namespace torchscope::analyzer
