// GPU tracing through CUPTI and NVTX, as the collector uses it. The implementation loads
// libcupti at run time, so a machine without a GPU or driver only sees start() fail with a
// one-line reason. Nothing here throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "torchscope/base/Result.h"
#include "torchscope/store/Writer.h"

namespace torchscope::cupti {

// cudaProfilerStart (true) or cudaProfilerStop (false) was called: runs on the calling thread, inside the call.
using ProfilerRangeHandler = void (*)(bool start);

struct GpuTracingOptions {
  std::size_t max_buffer_bytes = std::size_t{256} << 20;  // host memory for activity buffers
  std::size_t buffer_bytes = std::size_t{8} << 20;        // one activity buffer (capped by the above)
  bool trace_nvtx = true;
  bool trace_driver_api = false;
  // false: attached, but no activity and no located sync is recorded until setGpuTracingCapture(true).
  bool capture_at_start = true;
  // Set: the job's cudaProfilerStart/Stop calls are reported here (a capture range, as nsys --capture-range).
  ProfilerRangeHandler profiler_range = nullptr;
};

// Where a blocking call came from: filled by the collector's Python bridge when the calling
// thread runs Python, or from native frames otherwise. Returns false when nothing is known.
struct SourceLocation {
  std::string file;
  std::int64_t line = -1;
  std::string function;
  std::string stack_json;  // JSON array of {"file","line","function"}, innermost last
};
using SourceLocator = bool (*)(SourceLocation* out);

// Starts tracing into `writer` (which must outlive stopGpuTracing()). Fails with kUnsupported and
// a message such as "no CUDA driver: GPU tracing off" or "CUPTI is in use by another tool
// (torch.profiler, nsys): GPU tracing off"; the job is never affected. The failure is also stored
// as a "cupti" Diagnostic, so the caller only has to print the message once. Also fails with
// kInvalidArgument when tracing is already on. Must run before the job's first NVTX call for NVTX
// ranges to be traced (it sets NVTX_INJECTION64_PATH). The locator runs on the thread that makes a
// blocking CUDA call, inside the call.
[[nodiscard]] Result<void> startGpuTracing(store::Writer& writer, const GpuTracingOptions& options,
                                           SourceLocator locator);
// Hands every completed buffer to the writer, with the drop counts seen so far as Diagnostics.
void flushGpuTracing();
// The capture window opened (true) or closed: enables or disables the activity kinds and the blocking-call
// callbacks (CUPTI allows both while the job runs), keeping the subscription and the profiler-range callbacks.
void setGpuTracingCapture(bool capturing);
// Flushes the tail and detaches from CUPTI. Safe to call when tracing never started, and twice.
// Not async-signal-safe: call it from a normal thread (atexit, a signal-watching thread).
void stopGpuTracing();
// In a forked child: forget the parent's tracing without calling into CUPTI.
void gpuTracingAtForkChild();

}  // namespace torchscope::cupti
