// `torchscope export --format chrome`: a store as Chrome trace-event JSON
// ({"traceEvents": [...], "displayTimeUnit": "ms"}) that Perfetto UI and chrome://tracing open.
// Layout follows the PyTorch profiler's: host processes and threads by pid/tid, one process per
// GPU (pid = device) with one track per stream (tid = stream), `ac2g` flows from each API call to
// the GPU work it launched, torch.compile work on a "torch.compile" track of its process, and memory
// as counter tracks (`C` events, one per memory series) plus Kineto's `[memory]` allocation events.
// Timestamps are microseconds from the run's first event; baseTimeNanoseconds holds that origin.
//
// Error contract: exportChromeTrace() fails with the store's open errors (kNotFound,
// kNotTorchscope, kVersion, kCorrupt), kInvalidArgument for an output file that is one of the
// stores or not a regular file (refused before anything is written), and kIo when the output
// cannot be written. A file output is written beside the target and renamed over it only once
// complete, so a failed export leaves it as it was.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "torchscope/base/Result.h"

namespace torchscope::interop {

struct ExportReport {
  std::int64_t events = 0;  // entries of traceEvents
  std::int64_t flows = 0;   // API -> GPU flow pairs
};

[[nodiscard]] Result<ExportReport> exportChromeTrace(const std::string& store_path, std::ostream& out);
[[nodiscard]] Result<ExportReport> exportChromeTrace(const std::string& store_path, const std::string& output_path);

// Several stores (the ranks of a run folder) in one trace, side by side on one clock: each store's
// times go through its wall-clock anchor (`run.start_wall_ns`) and start from the earliest event of
// any store. Store i's processes and GPUs get pids (i + 1) * 100000000 + pid (or + device), are named
// "rank <r>: ..." and sorted by rank.
[[nodiscard]] Result<ExportReport> exportMergedChromeTrace(const std::vector<std::string>& store_paths, std::ostream& out);
[[nodiscard]] Result<ExportReport> exportMergedChromeTrace(const std::vector<std::string>& store_paths,
                                                           const std::string& output_path);

}  // namespace torchscope::interop
