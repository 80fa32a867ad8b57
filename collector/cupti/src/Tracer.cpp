#include "Tracer.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>

#include "BufferBudget.h"
#include "torchscope/base/Clock.h"
#include "torchscope/cupti/ApiCatalog.h"

namespace torchscope::cupti {
namespace {

constexpr std::array kRequiredKinds = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,          CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};
// Useful but not worth failing for: older drivers or GPUs may refuse some of them.
constexpr std::array kOptionalKinds = {
    CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_OVERHEAD,
    CUPTI_ACTIVITY_KIND_DEVICE,
    // cudaMalloc/cudaFree and memory-pool records: rare once torch's caching allocator is warm.
    CUPTI_ACTIVITY_KIND_MEMORY2,
    CUPTI_ACTIVITY_KIND_MEMORY_POOL,
};

constexpr std::size_t kMaxRecordedSyncs = 1 << 20;  // bounds the set if activity records never arrive

std::int64_t currentTid() { return static_cast<std::int64_t>(syscall(SYS_gettid)); }

std::string kindName(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
    case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return "MEMCPY2";
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return "OVERHEAD";
    case CUPTI_ACTIVITY_KIND_DEVICE: return "DEVICE";
    case CUPTI_ACTIVITY_KIND_MEMORY2: return "MEMORY2";
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return "MEMORY_POOL";
    case CUPTI_ACTIVITY_KIND_MARKER: return "MARKER (NVTX)";
    case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
    default: return std::to_string(static_cast<int>(kind));
  }
}

std::string formatBytes(std::size_t bytes) {
  return bytes >= (std::size_t{1} << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
}

std::uint64_t CUPTIAPI monotonicTimestamp() { return static_cast<std::uint64_t>(base::monotonicNow()); }

// A blocking call between its ENTER and EXIT callbacks, on the thread that makes it.
struct PendingSync {
  std::uint32_t correlation_id = 0;
  base::Nanos start_ns = 0;
  SourceLocation where;
};
thread_local std::vector<PendingSync> t_pending_syncs;

}  // namespace

Tracer::Tracer(std::shared_ptr<CuptiApi> api, store::Writer& writer, const GpuTracingOptions& options,
               SourceLocator locator)
    : api_(std::move(api)), writer_(writer), options_(options), locator_(locator), pid_(getpid()) {}

Error Tracer::failure(CUptiResult result, const char* step) const {
  switch (result) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return makeError(ErrorCode::kUnsupported,
                       "CUPTI is in use by another tool (torch.profiler, nsys): GPU tracing off");
    case CUPTI_ERROR_NOT_INITIALIZED:
      return makeError(ErrorCode::kUnsupported, "no usable CUDA driver (CUPTI could not attach): GPU tracing off");
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return makeError(ErrorCode::kUnsupported,
                       "no permission to profile the GPU (NVreg_RestrictProfilingToAdminUsers): GPU tracing off");
    default:
      return makeError(ErrorCode::kUnsupported,
                       std::string("CUPTI refused ") + step + " (" + api_->resultText(result) + "): GPU tracing off");
  }
}

Result<void> Tracer::attach(const TracerCallbacks& callbacks) {
  if (auto result = api_->subscribe(&subscriber_, callbacks.api_callback, nullptr); result != CUPTI_SUCCESS) {
    subscriber_ = nullptr;
    return failure(result, "the subscription");
  }
  // Must precede enabling any kind; otherwise calibrate against CUPTI's own clock.
  clock_from_callback_ = api_->registerTimestampCallback(&monotonicTimestamp) == CUPTI_SUCCESS;
  ClockAlignment clock = ClockAlignment::identity();
  if (!clock_from_callback_) {
    clock = ClockAlignment::calibrate(
        [this] {
          std::uint64_t ns = 0;
          return api_->timestamp(&ns) == CUPTI_SUCCESS ? static_cast<std::int64_t>(ns) : std::int64_t{0};
        },
        [] { return base::monotonicNow(); });
  }
  clock_offset_ns_ = clock.offsetNs();
  auto names = [api = api_](CUpti_CallbackDomain domain, std::uint32_t cbid) {
    const char* name = nullptr;
    return api->callbackName(domain, cbid, &name) == CUPTI_SUCCESS && name ? std::string(name) : std::string();
  };
  auto already_recorded = [this](std::uint32_t correlation_id) { return takeRecordedSync(correlation_id); };
  decoder_.emplace(DecoderOptions{pid_, options_.trace_driver_api}, clock, names, already_recorded);
  if (auto result = api_->registerBufferCallbacks(callbacks.buffer_requested, callbacks.buffer_completed);
      result != CUPTI_SUCCESS) {
    return failure(result, "the activity buffer callbacks");
  }
  return {};
}

Result<void> Tracer::enable() {
  for (auto kind : kRequiredKinds) {
    if (auto result = api_->enableActivity(kind); result != CUPTI_SUCCESS) {
      return failure(result, ("activity kind " + kindName(kind)).c_str());
    }
    enabled_kinds_.push_back(kind);
  }
  std::vector<CUpti_ActivityKind> optional(kOptionalKinds.begin(), kOptionalKinds.end());
  if (options_.trace_nvtx) optional.push_back(CUPTI_ACTIVITY_KIND_MARKER);
  if (options_.trace_driver_api) optional.push_back(CUPTI_ACTIVITY_KIND_DRIVER);
  for (auto kind : optional) {
    if (auto result = api_->enableActivity(kind); result == CUPTI_SUCCESS) {
      enabled_kinds_.push_back(kind);
    } else {
      writer_.add(store::Diagnostic{"cupti", "info",
                                    "activity kind " + kindName(kind) + " not traced (" +
                                        api_->resultText(result) + ")",
                                    1});
    }
  }
  // The decoder filters these too; silencing them at the source saves buffer space.
  for (auto cbid : noisyRuntimeApis()) (void)api_->enableRuntimeApiRecords(cbid, false);
  enableDriverApiRecords();
  for (auto cbid : blockingRuntimeApis()) {
    if (api_->enableCallback(true, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, cbid) == CUPTI_SUCCESS) {
      enabled_callbacks_.push_back(cbid);
    }
  }
  if (enabled_callbacks_.size() < blockingRuntimeApis().size()) {
    writer_.add(store::Diagnostic{"cupti", "warning", "some blocking CUDA calls cannot be located",
                                  static_cast<std::int64_t>(blockingRuntimeApis().size() - enabled_callbacks_.size())});
  }
  if (std::find(enabled_kinds_.begin(), enabled_kinds_.end(), CUPTI_ACTIVITY_KIND_MARKER) != enabled_kinds_.end()) {
    enableNvtxInjection();
  }
  if (options_.profiler_range != nullptr) {
    for (auto cbid :
         {CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000}) {
      if (api_->enableCallback(true, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, cbid) == CUPTI_SUCCESS) {
        profiler_callbacks_.push_back(cbid);
      }
    }
    if (profiler_callbacks_.size() < 2) {
      writer_.add(store::Diagnostic{"cupti", "warning",
                                    "cudaProfilerStart/Stop cannot be seen: the capture range never opens", 1});
    }
  }
  if (!options_.capture_at_start) setCapturing(false);
  return {};
}

// Without trace_driver_api, only the launch calls of the driver: a kernel Triton launches (torch.compile's and
// AOTInductor's on a GPU) otherwise has no launch row, so no thread, time or Python line to join it to.
void Tracer::enableDriverApiRecords() {
  if (options_.trace_driver_api) {
    for (auto cbid : noisyDriverApis()) (void)api_->enableDriverApiRecords(cbid, false);
    return;
  }
  for (auto cbid : driverLaunchApis()) {
    if (api_->enableDriverApiRecords(cbid, true) == CUPTI_SUCCESS) driver_launch_records_.push_back(cbid);
  }
  if (driver_launch_records_.size() < driverLaunchApis().size()) {
    writer_.add(
        store::Diagnostic{"cupti", "warning",
                          "kernels launched through the CUDA driver API (Triton's, so torch.compile's and "
                          "AOTInductor's) may have no launch row: CUPTI refused some driver launch calls",
                          static_cast<std::int64_t>(driverLaunchApis().size() - driver_launch_records_.size())});
  }
}

void Tracer::setCapturing(bool capturing) {
  if (capturing == capturing_) return;
  capturing_ = capturing;
  for (auto kind : enabled_kinds_) (void)(capturing ? api_->enableActivity(kind) : api_->disableActivity(kind));
  // Enabling the DRIVER kind again turned every driver call back on; one by one they follow the capture too.
  if (capturing && options_.trace_driver_api) {
    for (auto cbid : noisyDriverApis()) (void)api_->enableDriverApiRecords(cbid, false);
  }
  for (auto cbid : driver_launch_records_) (void)api_->enableDriverApiRecords(cbid, capturing);
  for (auto cbid : enabled_callbacks_) {
    (void)api_->enableCallback(capturing, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  }
}

void Tracer::enableNvtxInjection() {
  // NVTX loads the library named here at its first call; libcupti then reports ranges and marks
  // as MARKER records. Someone else's injection (nsys) is left in place.
  const std::string library = api_->libraryPath();
  if (library.empty()) return;
  const char* current = std::getenv("NVTX_INJECTION64_PATH");
  if (current == nullptr || *current == '\0') {
    setenv("NVTX_INJECTION64_PATH", library.c_str(), 1);
  } else if (library != current) {
    writer_.add(store::Diagnostic{"cupti", "info",
                                  std::string("NVTX_INJECTION64_PATH already set to ") + current +
                                      ": NVTX ranges are not traced",
                                  1});
  }
}

void Tracer::detach() {
  for (auto kind : enabled_kinds_) (void)api_->disableActivity(kind);
  enabled_kinds_.clear();
  for (auto cbid : driver_launch_records_) (void)api_->enableDriverApiRecords(cbid, false);
  driver_launch_records_.clear();
  for (auto cbid : enabled_callbacks_) {
    (void)api_->enableCallback(false, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  }
  enabled_callbacks_.clear();
  for (auto cbid : profiler_callbacks_) {
    (void)api_->enableCallback(false, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  }
  profiler_callbacks_.clear();
}

void Tracer::finish() {
  DecodedBatch batch;
  {
    std::lock_guard lock(decode_mutex_);
    if (decoder_) decoder_->finish(batch);
  }
  std::move(batch).writeTo(writer_);
  emitDropCounts();
  if (subscriber_ != nullptr) {
    (void)api_->unsubscribe(subscriber_);
    subscriber_ = nullptr;
  }
}

void Tracer::consumeBuffer(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer,
                           std::size_t valid_bytes) {
  DecodedBatch batch;
  if (buffer != nullptr && valid_bytes > 0) {
    std::lock_guard lock(decode_mutex_);
    CUpti_Activity* record = nullptr;
    std::uint64_t count = 0;
    while (decoder_ && api_->nextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS && record != nullptr) {
      decoder_->decode(*record, batch);
      ++count;
    }
    records_ += count;
  }
  std::size_t dropped = 0;
  if (api_->droppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) records_dropped_ += dropped;
  ++buffers_completed_;
  std::move(batch).writeTo(writer_);
}

bool Tracer::takeRecordedSync(std::uint32_t correlation_id) {
  std::lock_guard lock(recorded_mutex_);
  return recorded_syncs_.erase(correlation_id) > 0;
}

void Tracer::onRuntimeCallback(CUpti_CallbackId cbid, const CUpti_CallbackData& data) {
  if (options_.profiler_range != nullptr && data.callbackSite == CUPTI_API_ENTER) {
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) return options_.profiler_range(true);
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) return options_.profiler_range(false);
  }
  const auto call = blockingRuntimeCall(cbid);
  if (!call) return;
  if (data.callbackSite == CUPTI_API_ENTER) {
    PendingSync pending;
    pending.correlation_id = data.correlationId;
    if (locator_ == nullptr || !locator_(&pending.where)) pending.where = SourceLocation{};
    pending.start_ns = base::monotonicNow();  // after locating, so that its cost is not blocked time
    t_pending_syncs.push_back(std::move(pending));
    return;
  }
  const base::Nanos end_ns = base::monotonicNow();
  auto it = std::find_if(t_pending_syncs.rbegin(), t_pending_syncs.rend(),
                         [&](const PendingSync& p) { return p.correlation_id == data.correlationId; });
  if (it == t_pending_syncs.rend()) return;  // tracing started inside this call
  store::Sync row;
  row.pid = pid_;
  row.tid = currentTid();
  row.start_ns = it->start_ns;
  row.end_ns = end_ns;
  row.sync_kind = call->sync_kind;
  row.origin = "cupti";
  row.op = call->op;
  row.correlation_id = data.correlationId;
  row.file = std::move(it->where.file);
  row.line = it->where.line;
  row.function = std::move(it->where.function);
  row.stack = std::move(it->where.stack_json);
  t_pending_syncs.erase(std::next(it).base());
  {
    std::lock_guard lock(recorded_mutex_);
    if (recorded_syncs_.size() >= kMaxRecordedSyncs) recorded_syncs_.clear();
    recorded_syncs_.insert(data.correlationId);
  }
  ++syncs_located_;
  writer_.add(std::move(row));
}

void Tracer::emitDropCounts() {
  std::lock_guard lock(drops_mutex_);
  const std::uint64_t dropped = records_dropped_.load();
  if (dropped > drops_reported_) {
    writer_.add(store::Diagnostic{"cupti", "warning", "GPU activity records dropped by CUPTI (no buffer space)",
                                  static_cast<std::int64_t>(dropped - drops_reported_)});
    drops_reported_ = dropped;
  }
  const std::uint64_t refused = bufferBudget().refused();
  if (refused > refusals_reported_) {
    writer_.add(store::Diagnostic{"cupti", "warning",
                                  "activity buffer requests refused at the " +
                                      formatBytes(options_.max_buffer_bytes) + " cap",
                                  static_cast<std::int64_t>(refused - refusals_reported_)});
    refusals_reported_ = refused;
  }
}

GpuTracingStats Tracer::stats() const {
  GpuTracingStats stats;
  stats.active = true;
  stats.clock_from_callback = clock_from_callback_;
  stats.clock_offset_ns = clock_offset_ns_;
  stats.records = records_.load();
  stats.records_dropped = records_dropped_.load();
  stats.buffers_completed = buffers_completed_.load();
  stats.syncs_located = syncs_located_.load();
  return stats;
}

}  // namespace torchscope::cupti
