#include "torchscope/cupti/FakeCupti.h"

#include <algorithm>
#include <span>
#include <thread>

#include "torchscope/base/Clock.h"

namespace torchscope::cupti {
namespace {

struct KnownName {
  CUpti_CallbackId cbid;
  const char* name;
};
// The spelling cuptiGetCallbackName uses, version suffix included.
constexpr KnownName kRuntimeNames[] = {
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync_v3020"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc_v3020"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, "cudaStreamSynchronize_v3020"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, "cudaGetDevice_v3020"},
};
constexpr KnownName kDriverNames[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx"},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2"},
};

}  // namespace

std::size_t syntheticRecordSize(std::uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return sizeof(CUpti_ActivityMemoryPool3);
    default: return sizeof(CUpti_Activity);
  }
}

CUptiResult nextSyntheticRecord(std::uint8_t* buffer, std::size_t valid_bytes, CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::size_t offset = 0;
  if (*record != nullptr) {
    const auto* previous = reinterpret_cast<const std::uint8_t*>(*record);
    if (previous < buffer || previous >= buffer + valid_bytes) return CUPTI_ERROR_INVALID_PARAMETER;
    std::uint32_t kind = 0;
    std::memcpy(&kind, previous, sizeof(kind));
    offset = static_cast<std::size_t>(previous - buffer) + (syntheticRecordSize(kind) + 7) / 8 * 8;
  }
  if (offset + sizeof(std::uint32_t) > valid_bytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  std::uint32_t kind = 0;
  std::memcpy(&kind, buffer + offset, sizeof(kind));
  if (offset + syntheticRecordSize(kind) > valid_bytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  return CUPTI_SUCCESS;
}

bool FakeCupti::deliver(const std::vector<std::uint8_t>& bytes, std::size_t dropped) {
  std::uint8_t* buffer = nullptr;
  std::size_t size = 0;
  std::size_t max_records = 0;
  requested_(&buffer, &size, &max_records);
  if (buffer == nullptr) {
    complete(nullptr, 0, 0, dropped);  // CUPTI still reports what it had to drop
    return false;
  }
  const std::size_t valid = std::min(size, bytes.size());
  std::memcpy(buffer, bytes.data(), valid);
  complete(buffer, size, valid, dropped);
  return true;
}

void FakeCupti::complete(std::uint8_t* buffer, std::size_t size, std::size_t valid, std::size_t dropped) {
  {
    std::lock_guard lock(mutex_);
    dropped_for_current_ = dropped;
  }
  completed_(nullptr, 0, buffer, size, valid);
}

void FakeCupti::queueForFlush(std::vector<std::uint8_t> bytes) {
  std::lock_guard lock(mutex_);
  flush_queue_.push_back(std::move(bytes));
}

bool FakeCupti::holdBuffer() {
  std::uint8_t* buffer = nullptr;
  std::size_t size = 0;
  std::size_t max_records = 0;
  requested_(&buffer, &size, &max_records);
  if (buffer == nullptr) return false;
  std::lock_guard lock(mutex_);
  held_.push_back({buffer, size});
  return true;
}

void FakeCupti::completeHeld() {
  std::vector<Held> held;
  {
    std::lock_guard lock(mutex_);
    held.swap(held_);
  }
  for (const auto& h : held) complete(h.buffer, h.size, 0, 0);
}

void FakeCupti::callApi(CUpti_CallbackId cbid, std::uint32_t correlation_id, const std::function<void()>& body) {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  bool enabled = false;
  {
    std::lock_guard lock(mutex_);
    callback = api_callback_;
    userdata = api_userdata_;
    enabled = subscribed_ && callbacks_.count(cbid) > 0;
  }
  std::uint64_t correlation_data = 0;
  CUpti_CallbackData data{};
  data.correlationId = correlation_id;
  data.correlationData = &correlation_data;
  data.callbackSite = CUPTI_API_ENTER;
  if (enabled) callback(userdata, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &data);
  if (body) body();
  data.callbackSite = CUPTI_API_EXIT;
  if (enabled) callback(userdata, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &data);
}

std::set<CUpti_ActivityKind> FakeCupti::enabledKinds() const {
  std::lock_guard lock(mutex_);
  return enabled_;
}

bool FakeCupti::callbackEnabled(CUpti_CallbackId cbid) const {
  std::lock_guard lock(mutex_);
  return callbacks_.count(cbid) > 0;
}

std::set<CUpti_CallbackId> FakeCupti::driverApiRecords() const {
  std::lock_guard lock(mutex_);
  return driver_records_;
}

std::set<CUpti_CallbackId> FakeCupti::silencedDriverApis() const {
  std::lock_guard lock(mutex_);
  return silenced_driver_;
}

bool FakeCupti::subscribed() const {
  std::lock_guard lock(mutex_);
  return subscribed_;
}

int FakeCupti::flushCount() const {
  std::lock_guard lock(mutex_);
  return flushes_;
}

CUptiResult FakeCupti::enableActivity(CUpti_ActivityKind kind) {
  std::lock_guard lock(mutex_);
  const auto configured = enable_results.find(kind);
  if (configured != enable_results.end() && configured->second != CUPTI_SUCCESS) return configured->second;
  enabled_.insert(kind);
  // As CUPTI: the DRIVER kind turns every driver call on, whatever was set one by one before.
  if (kind == CUPTI_ACTIVITY_KIND_DRIVER) {
    driver_records_.clear();
    silenced_driver_.clear();
  }
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::disableActivity(CUpti_ActivityKind kind) {
  std::lock_guard lock(mutex_);
  enabled_.erase(kind);
  if (kind == CUPTI_ACTIVITY_KIND_DRIVER) {
    driver_records_.clear();
    silenced_driver_.clear();
  }
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::enableRuntimeApiRecords(CUpti_CallbackId, bool) { return CUPTI_SUCCESS; }

CUptiResult FakeCupti::enableDriverApiRecords(CUpti_CallbackId cbid, bool enable) {
  std::lock_guard lock(mutex_);
  if (enabled_.count(CUPTI_ACTIVITY_KIND_DRIVER) > 0) {
    if (enable) {
      silenced_driver_.erase(cbid);
    } else {
      silenced_driver_.insert(cbid);
    }
  } else if (enable) {
    driver_records_.insert(cbid);
  } else {
    driver_records_.erase(cbid);
  }
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::registerBufferCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                               CUpti_BuffersCallbackCompleteFunc completed) {
  std::lock_guard lock(mutex_);
  requested_ = requested;
  completed_ = completed;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::nextRecord(std::uint8_t* buffer, std::size_t valid_bytes, CUpti_Activity** record) {
  return nextSyntheticRecord(buffer, valid_bytes, record);
}

CUptiResult FakeCupti::droppedRecords(CUcontext, std::uint32_t, std::size_t* dropped) {
  std::lock_guard lock(mutex_);
  *dropped = dropped_for_current_;
  dropped_for_current_ = 0;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::flushAll(std::uint32_t) {
  std::deque<std::vector<std::uint8_t>> queue;
  {
    std::lock_guard lock(mutex_);
    ++flushes_;
    queue.swap(flush_queue_);
  }
  // CUPTI completes buffers from its own thread while the caller waits: a caller holding a lock
  // that the completion callback needs deadlocks here, as it would with the real library.
  std::thread worker([&] {
    for (const auto& bytes : queue) deliver(bytes);
  });
  worker.join();
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::registerTimestampCallback(CUpti_TimestampCallbackFunc) { return timestamp_callback_result; }

CUptiResult FakeCupti::timestamp(std::uint64_t* ns) {
  *ns = static_cast<std::uint64_t>(base::monotonicNow() - cupti_clock_offset_ns);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) {
  std::lock_guard lock(mutex_);
  if (subscribe_result != CUPTI_SUCCESS) return subscribe_result;
  if (subscribed_) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  subscribed_ = true;
  api_callback_ = callback;
  api_userdata_ = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&subscriber_token_);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::unsubscribe(CUpti_SubscriberHandle) {
  std::lock_guard lock(mutex_);
  subscribed_ = false;
  callbacks_.clear();
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::enableCallback(bool enable, CUpti_SubscriberHandle, CUpti_CallbackDomain domain,
                                      CUpti_CallbackId cbid) {
  std::lock_guard lock(mutex_);
  if (!subscribed_ || domain != CUPTI_CB_DOMAIN_RUNTIME_API) return CUPTI_ERROR_INVALID_PARAMETER;
  if (enable) {
    callbacks_.insert(cbid);
  } else {
    callbacks_.erase(cbid);
  }
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::callbackName(CUpti_CallbackDomain domain, std::uint32_t cbid, const char** name) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  for (const auto& known : domain == CUPTI_CB_DOMAIN_RUNTIME_API ? std::span<const KnownName>(kRuntimeNames)
                                                                 : std::span<const KnownName>(kDriverNames)) {
    if (known.cbid == cbid) {
      *name = known.name;
      return CUPTI_SUCCESS;
    }
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

std::string FakeCupti::resultText(CUptiResult result) {
  return "CUPTI_ERROR " + std::to_string(static_cast<int>(result));
}

}  // namespace torchscope::cupti
