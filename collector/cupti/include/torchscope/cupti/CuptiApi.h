// The part of CUPTI the tracer uses, behind an interface: the real one loads libcupti with
// dlopen() (no link-time CUDA dependency), a fake (FakeCupti.h) feeds synthetic records in tests.
//
// Error contract: methods return CUPTI's own result codes and never throw. loadCupti() fails with
// kUnsupported and a one-line reason ("no CUDA driver: GPU tracing off", "libcupti not found ...").
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "torchscope/base/Result.h"

namespace torchscope::cupti {

class CuptiApi {
 public:
  virtual ~CuptiApi() = default;

  // Activity API: asynchronous records delivered in buffers.
  virtual CUptiResult enableActivity(CUpti_ActivityKind kind) = 0;
  virtual CUptiResult disableActivity(CUpti_ActivityKind kind) = 0;
  // Silences one runtime API call in the RUNTIME activity kind (noise such as cudaGetDevice).
  virtual CUptiResult enableRuntimeApiRecords(CUpti_CallbackId cbid, bool enable) = 0;
  // Records of one driver API call, with or without the DRIVER activity kind (which overrides it when enabled later).
  virtual CUptiResult enableDriverApiRecords(CUpti_CallbackId cbid, bool enable) = 0;
  virtual CUptiResult registerBufferCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                              CUpti_BuffersCallbackCompleteFunc completed) = 0;
  // CUPTI_ERROR_MAX_LIMIT_REACHED when the buffer has no more records.
  virtual CUptiResult nextRecord(std::uint8_t* buffer, std::size_t valid_bytes, CUpti_Activity** record) = 0;
  virtual CUptiResult droppedRecords(CUcontext context, std::uint32_t stream_id, std::size_t* dropped) = 0;
  // Re-enters the buffer-completed callback: never call it while holding a lock that callback takes.
  virtual CUptiResult flushAll(std::uint32_t flags) = 0;

  // Timestamps: CUPTI's clock, or the one registered here.
  virtual CUptiResult registerTimestampCallback(CUpti_TimestampCallbackFunc clock) = 0;
  virtual CUptiResult timestamp(std::uint64_t* ns) = 0;

  // Callback API: synchronous callbacks on the thread that makes the call.
  virtual CUptiResult subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) = 0;
  virtual CUptiResult unsubscribe(CUpti_SubscriberHandle subscriber) = 0;
  virtual CUptiResult enableCallback(bool enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                                     CUpti_CallbackId cbid) = 0;
  virtual CUptiResult callbackName(CUpti_CallbackDomain domain, std::uint32_t cbid, const char** name) = 0;

  [[nodiscard]] virtual std::string resultText(CUptiResult result) = 0;
  // The loaded libcupti (for NVTX_INJECTION64_PATH); "" for a fake.
  [[nodiscard]] virtual std::string libraryPath() const = 0;
};

// Where libcupti is looked for, in order: $TORCHSCOPE_CUPTI_LIBRARY, a libcupti already loaded in the
// process, the loader's search path, the toolkit found at build time.
[[nodiscard]] std::vector<std::string> cuptiLibraryCandidates();
// Loads libcupti from the first candidate that opens and has every symbol, with the major version
// the decoder was built for. Does not touch the CUDA driver.
[[nodiscard]] Result<std::unique_ptr<CuptiApi>> loadCuptiLibrary(const std::vector<std::string>& candidates);
// True when the CUDA driver library (libcuda.so.1) can be loaded.
[[nodiscard]] bool cudaDriverAvailable();
// The driver check, then loadCuptiLibrary(cuptiLibraryCandidates()).
[[nodiscard]] Result<std::unique_ptr<CuptiApi>> loadCupti();

}  // namespace torchscope::cupti
