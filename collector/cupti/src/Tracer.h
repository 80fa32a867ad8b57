// One tracing session on a CuptiApi: set-up, decoding of completed buffers, located sync rows.
// GpuTracer.cpp owns the process-wide instance and the CUPTI callbacks that reach it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_set>
#include <vector>

#include "torchscope/cupti/ActivityDecoder.h"
#include "torchscope/cupti/CuptiApi.h"
#include "torchscope/cupti/GpuTracer.h"

namespace torchscope::cupti {

struct TracerCallbacks {
  CUpti_BuffersCallbackRequestFunc buffer_requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc buffer_completed = nullptr;
  CUpti_CallbackFunc api_callback = nullptr;
};

class Tracer {
 public:
  Tracer(std::shared_ptr<CuptiApi> api, store::Writer& writer, const GpuTracingOptions& options,
         SourceLocator locator);

  // Subscribes, sets up the clock and registers the buffer callbacks; enables nothing yet.
  [[nodiscard]] Result<void> attach(const TracerCallbacks& callbacks);
  // Activity kinds, blocking-call callbacks and NVTX injection.
  [[nodiscard]] Result<void> enable();
  // Disables what enable() turned on. Idempotent.
  void detach();
  // The capture window: activity kinds and blocking-call callbacks off (false) or back on (true).
  void setCapturing(bool capturing);
  // After the last flush: final diagnostics and unsubscribe.
  void finish();

  void consumeBuffer(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer, std::size_t valid_bytes);
  void onRuntimeCallback(CUpti_CallbackId cbid, const CUpti_CallbackData& data);
  // Drops seen since the last call, as Diagnostics.
  void emitDropCounts();

  [[nodiscard]] const std::shared_ptr<CuptiApi>& api() const { return api_; }
  [[nodiscard]] GpuTracingStats stats() const;

 private:
  [[nodiscard]] Error failure(CUptiResult result, const char* step) const;
  void enableNvtxInjection();
  void enableDriverApiRecords();
  bool takeRecordedSync(std::uint32_t correlation_id);

  std::shared_ptr<CuptiApi> api_;
  store::Writer& writer_;
  GpuTracingOptions options_;
  SourceLocator locator_;
  std::int64_t pid_ = 0;

  CUpti_SubscriberHandle subscriber_ = nullptr;
  bool clock_from_callback_ = false;
  std::int64_t clock_offset_ns_ = 0;
  std::vector<CUpti_ActivityKind> enabled_kinds_;
  std::vector<CUpti_CallbackId> enabled_callbacks_;
  std::vector<CUpti_CallbackId> driver_launch_records_;  // driver launch calls enabled one by one
  std::vector<CUpti_CallbackId> profiler_callbacks_;     // cudaProfilerStart/Stop, when options_.profiler_range is set
  bool capturing_ = true;                                // guarded by the caller's control lock, as enable/detach

  std::mutex decode_mutex_;  // decoder state; never held while calling into CUPTI's flush
  std::optional<ActivityDecoder> decoder_;

  std::mutex recorded_mutex_;  // correlation ids of syncs the Callback API already wrote
  std::unordered_set<std::uint32_t> recorded_syncs_;

  std::mutex drops_mutex_;
  std::uint64_t drops_reported_ = 0;
  std::uint64_t refusals_reported_ = 0;

  std::atomic<std::uint64_t> records_{0};
  std::atomic<std::uint64_t> records_dropped_{0};
  std::atomic<std::uint64_t> buffers_completed_{0};
  std::atomic<std::uint64_t> syncs_located_{0};
};

}  // namespace torchscope::cupti
