// The tracer behind GpuTracing.h, with the CUPTI implementation as a parameter so tests can run
// it on a FakeCupti. One tracer per process: CUPTI's buffer callbacks carry no user data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "torchscope/cupti/CuptiApi.h"
#include "torchscope/cupti/GpuTracing.h"

namespace torchscope::cupti {

// startGpuTracing() with `api` instead of the dlopen()ed libcupti. Fails with kInvalidArgument
// when tracing is already on.
[[nodiscard]] Result<void> startGpuTracingWith(std::shared_ptr<CuptiApi> api, store::Writer& writer,
                                               const GpuTracingOptions& options, SourceLocator locator);

struct GpuTracingStats {
  bool active = false;
  bool clock_from_callback = false;  // CUPTI reports CLOCK_MONOTONIC itself (no calibration)
  std::int64_t clock_offset_ns = 0;  // store = cupti + offset when calibrated
  std::uint64_t records = 0;             // activity records decoded
  std::uint64_t records_dropped = 0;     // reported by CUPTI (no buffer to put them in)
  std::uint64_t buffers_completed = 0;
  std::uint64_t buffers_refused = 0;     // requests refused at max_buffer_bytes
  std::uint64_t syncs_located = 0;       // sync rows written by the Callback API
  std::size_t buffer_bytes_in_use = 0;
  std::size_t buffer_bytes_peak = 0;
};
[[nodiscard]] GpuTracingStats gpuTracingStats();

}  // namespace torchscope::cupti
