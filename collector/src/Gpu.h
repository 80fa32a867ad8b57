// GPU tracing as the collector drives it: the CUPTI backend (torchscope_cupti) when it is built
// in, with the calling thread's Python user frame as the source of blocking calls.
#pragma once

#include <string>

#include "torchscope/store/Writer.h"

namespace torchscope::collector {

#if TORCHSCOPE_HAVE_CUPTI
inline constexpr bool kGpuTracingBuiltIn = true;
#else
inline constexpr bool kGpuTracingBuiltIn = false;
#endif

// Starts GPU tracing into `writer`, recording from the start when `capturing` (else once setGpuCapture(true)), and
// with `profiler_range` reporting cudaProfilerStart/Stop to the capture window; on failure returns false with the
// backend's one-line reason in `failure` ("" when GPU tracing is not built in).
[[nodiscard]] bool startGpuTracingFor(store::Writer& writer, bool python, bool capturing, bool profiler_range,
                                      std::string* failure);
// The capture window opened or closed: GPU activity records and located syncs on or off.
void setGpuCapture(bool capturing);
void flushGpuTracingNow();
void stopGpuTracingNow();
// In a forked child: drop the parent's tracing state without calling into CUPTI.
void gpuTracingForgetInChild();

}  // namespace torchscope::collector
