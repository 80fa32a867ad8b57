// GPU tracing through CUPTI and NVTX, as the collector uses it. The implementation loads
// libcupti at run time, so a machine without a GPU or driver only sees start() fail with a
// one-line reason. Nothing here throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "torchscope/store/Result.h"
#include "torchscope/store/Writer.h"

namespace torchscope::cupti {

struct GpuTracingOptions {
  std::size_t max_buffer_bytes = std::size_t{256} << 20;  // host memory for activity buffers
  bool trace_nvtx = true;
  bool trace_driver_api = false;
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
// (torch.profiler, nsys): GPU tracing off"; the job is never affected.
[[nodiscard]] Result<void> startGpuTracing(store::Writer& writer, const GpuTracingOptions& options,
                                           SourceLocator locator);
// Hands every completed buffer to the writer.
void flushGpuTracing();
// Flushes and detaches from CUPTI. Safe to call when tracing never started.
void stopGpuTracing();
// In a forked child: forget the parent's tracing without calling into CUPTI.
void gpuTracingAtForkChild();

}  // namespace torchscope::cupti
