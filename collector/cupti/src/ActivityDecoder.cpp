#include "torchscope/cupti/ActivityDecoder.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <limits>
#include <utility>

#include "torchscope/cupti/ApiCatalog.h"

namespace torchscope::cupti {
namespace {

// Copies the record out instead of casting: the buffer is only guaranteed to be 8-byte aligned and
// a copy keeps the decoder free of aliasing questions.
template <class T>
T recordAs(const CUpti_Activity& record) {
  T value;
  std::memcpy(&value, &record, sizeof(T));
  return value;
}

// The bytes of an enum field as an integer: CUPTI (or a damaged buffer) may hold values outside
// the enum's range, and loading those as the enum type is undefined.
template <class Enum>
std::uint32_t rawValue(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(std::uint32_t));
  std::uint32_t value = 0;
  std::memcpy(&value, &field, sizeof(value));
  return value;
}

std::string text(const char* value) { return value ? std::string(value) : std::string(); }

constexpr std::uint32_t kInvalidId = std::numeric_limits<std::uint32_t>::max();
std::int64_t idOrUnknown(std::uint32_t id) { return id == kInvalidId ? -1 : static_cast<std::int64_t>(id); }

const char* copyKindName(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "unknown";
  }
}

const char* memoryKindName(std::uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "managed";
    default: return "unknown";
  }
}

struct SyncName {
  const char* kind;
  const char* op;
};

SyncName syncName(std::uint32_t type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return {"event", "cudaEventSynchronize"};
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return {"stream-wait-event", "cudaStreamWaitEvent"};
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return {"stream", "cudaStreamSynchronize"};
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return {"context", "cudaDeviceSynchronize"};
    default: return {"unknown", "unknown"};
  }
}

const char* overheadName(std::uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "CUPTI resources";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "activity buffer request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "unified memory tracing set-up";
    default: return "unknown";
  }
}

std::int64_t duration(base::Nanos start, base::Nanos end) { return start >= 0 && end >= start ? end - start : 0; }

}  // namespace

ClockAlignment ClockAlignment::calibrate(const Clock& cupti, const Clock& monotonic, int samples) {
  std::int64_t best_width = std::numeric_limits<std::int64_t>::max();
  std::int64_t best_offset = 0;
  for (int i = 0; i < std::max(samples, 1); ++i) {
    const std::int64_t before = monotonic();
    const std::int64_t reading = cupti();
    const std::int64_t after = monotonic();
    const std::int64_t width = after - before;
    if (width >= 0 && width < best_width) {
      best_width = width;
      best_offset = before + width / 2 - reading;
    }
  }
  if (best_width == std::numeric_limits<std::int64_t>::max()) return ClockAlignment(0, -1);
  return ClockAlignment(best_offset, (best_width + 1) / 2);
}

base::Nanos ClockAlignment::toStore(std::uint64_t cupti_ns) const {
  if (cupti_ns == 0 || cupti_ns > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return -1;
  const auto value = static_cast<std::int64_t>(cupti_ns);
  std::int64_t shifted = 0;
  if (__builtin_add_overflow(value, offset_ns_, &shifted) || shifted < 0) return -1;
  return shifted;
}

std::size_t DecodedBatch::size() const {
  return kernels.size() + memcpys.size() + memsets.size() + syncs.size() + api_calls.size() + nvtx.size() +
         devices.size() + memory_events.size() + diagnostics.size();
}

void DecodedBatch::writeTo(store::Writer& writer) && {
  for (auto& r : devices) writer.add(std::move(r));
  for (auto& r : kernels) writer.add(std::move(r));
  for (auto& r : memcpys) writer.add(std::move(r));
  for (auto& r : memsets) writer.add(std::move(r));
  for (auto& r : syncs) writer.add(std::move(r));
  for (auto& r : api_calls) writer.add(std::move(r));
  for (auto& r : nvtx) writer.add(std::move(r));
  for (auto& r : memory_events) writer.add(std::move(r));
  for (auto& r : diagnostics) writer.add(std::move(r));
}

ActivityDecoder::ActivityDecoder(DecoderOptions options, ClockAlignment clock, NameLookup names,
                                 SyncFilter already_recorded)
    : options_(options), clock_(clock), names_(std::move(names)), already_recorded_(std::move(already_recorded)) {}

void ActivityDecoder::decode(const CUpti_Activity& record, DecodedBatch& out) {
  ++decoded_;
  switch (rawValue(record.kind)) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      decodeKernel(recordAs<CUpti_ActivityKernel10>(record), out);
      return;
    case CUPTI_ACTIVITY_KIND_MEMCPY: decodeMemcpy(recordAs<CUpti_ActivityMemcpy6>(record), out); return;
    case CUPTI_ACTIVITY_KIND_MEMCPY2: decodePeerMemcpy(recordAs<CUpti_ActivityMemcpyPtoP4>(record), out); return;
    case CUPTI_ACTIVITY_KIND_MEMSET: decodeMemset(recordAs<CUpti_ActivityMemset4>(record), out); return;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      decodeSync(recordAs<CUpti_ActivitySynchronization2>(record), out);
      return;
    case CUPTI_ACTIVITY_KIND_RUNTIME: decodeApi(recordAs<CUpti_ActivityAPI>(record), true, out); return;
    case CUPTI_ACTIVITY_KIND_DRIVER: decodeApi(recordAs<CUpti_ActivityAPI>(record), false, out); return;
    case CUPTI_ACTIVITY_KIND_MARKER: decodeMarker(recordAs<CUpti_ActivityMarker2>(record), out); return;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: decodeOverhead(recordAs<CUpti_ActivityOverhead3>(record)); return;
    case CUPTI_ACTIVITY_KIND_DEVICE: decodeDevice(recordAs<CUpti_ActivityDevice5>(record), out); return;
    case CUPTI_ACTIVITY_KIND_MEMORY2: decodeMemory(recordAs<CUpti_ActivityMemory4>(record), out); return;
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: decodeMemoryPool(recordAs<CUpti_ActivityMemoryPool3>(record), out); return;
    default:
      --decoded_;
      ++unknown_;
      return;
  }
}

void ActivityDecoder::decodeKernel(const CUpti_ActivityKernel10& k, DecodedBatch& out) const {
  store::Kernel row;
  row.pid = options_.pid;
  row.device = k.deviceId;
  row.context = k.contextId;
  row.stream = idOrUnknown(k.streamId);
  row.start_ns = clock_.toStore(k.start);
  row.end_ns = clock_.toStore(k.end);
  row.name = text(k.name);
  row.correlation_id = k.correlationId;
  row.grid_x = k.gridX, row.grid_y = k.gridY, row.grid_z = k.gridZ;
  row.block_x = k.blockX, row.block_y = k.blockY, row.block_z = k.blockZ;
  row.registers_per_thread = k.registersPerThread;
  row.static_shared_bytes = k.staticSharedMemory;
  row.dynamic_shared_bytes = k.dynamicSharedMemory;
  out.kernels.push_back(std::move(row));
}

// Memcpy and peer-to-peer memcpy records share every field the store keeps but the device and the kind.
template <class Record>
store::Memcpy memcpyRow(const Record& m, std::int64_t pid, const ClockAlignment& clock, std::int64_t device,
                        std::string copy_kind) {
  store::Memcpy row;
  row.pid = pid;
  row.device = device;
  row.stream = idOrUnknown(m.streamId);
  row.start_ns = clock.toStore(m.start);
  row.end_ns = clock.toStore(m.end);
  row.copy_kind = std::move(copy_kind);
  row.bytes = static_cast<std::int64_t>(m.bytes);
  row.src_kind = memoryKindName(m.srcKind);
  row.dst_kind = memoryKindName(m.dstKind);
  row.pageable = m.srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE || m.dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  row.async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
  row.correlation_id = m.correlationId;
  return row;
}

void ActivityDecoder::decodeMemcpy(const CUpti_ActivityMemcpy6& m, DecodedBatch& out) const {
  out.memcpys.push_back(memcpyRow(m, options_.pid, clock_, m.deviceId, copyKindName(m.copyKind)));
}

void ActivityDecoder::decodePeerMemcpy(const CUpti_ActivityMemcpyPtoP4& m, DecodedBatch& out) const {
  out.memcpys.push_back(memcpyRow(m, options_.pid, clock_, m.srcDeviceId, "PtoP"));
}

void ActivityDecoder::decodeMemset(const CUpti_ActivityMemset4& m, DecodedBatch& out) const {
  store::Memset row;
  row.pid = options_.pid;
  row.device = m.deviceId;
  row.stream = idOrUnknown(m.streamId);
  row.start_ns = clock_.toStore(m.start);
  row.end_ns = clock_.toStore(m.end);
  row.bytes = static_cast<std::int64_t>(m.bytes);
  row.value = m.value;
  row.memory_kind = memoryKindName(m.memoryKind);
  row.correlation_id = m.correlationId;
  out.memsets.push_back(std::move(row));
}

// One cudaMalloc/cudaFree (or stream-ordered allocation): torch's caching allocator asks the driver for
// whole segments, so these are segments, not tensors.
void ActivityDecoder::decodeMemory(const CUpti_ActivityMemory4& m, DecodedBatch& out) const {
  store::MemoryEvent row;
  row.pid = options_.pid;
  row.device = m.deviceId;
  row.ts_ns = clock_.toStore(m.timestamp);
  switch (rawValue(m.memoryOperationType)) {
    case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION: row.operation = "alloc"; break;
    case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE: row.operation = "free"; break;
    default: row.operation = "unknown"; break;
  }
  row.bytes = static_cast<std::int64_t>(std::min<std::uint64_t>(m.bytes, std::numeric_limits<std::int64_t>::max()));
  row.address = static_cast<std::int64_t>(m.address);
  row.memory_kind = memoryKindName(rawValue(m.memoryKind));
  row.stream = idOrUnknown(m.streamId);
  row.correlation_id = m.correlationId;
  out.memory_events.push_back(std::move(row));
}

void ActivityDecoder::decodeMemoryPool(const CUpti_ActivityMemoryPool3& p, DecodedBatch& out) const {
  store::MemoryEvent row;
  row.pid = options_.pid;
  row.device = p.deviceId;
  row.ts_ns = clock_.toStore(p.timestamp);
  switch (rawValue(p.memoryPoolOperationType)) {
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED: row.operation = "pool-create"; break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED: row.operation = "pool-destroy"; break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED: row.operation = "pool-trim"; break;
    default: row.operation = "unknown"; break;
  }
  row.bytes = static_cast<std::int64_t>(std::min<std::uint64_t>(p.size, std::numeric_limits<std::int64_t>::max()));
  row.address = static_cast<std::int64_t>(p.address);
  row.memory_kind = p.isManagedPool != 0 ? "managed" : "device";
  row.correlation_id = p.correlationId;
  out.memory_events.push_back(std::move(row));
}

void ActivityDecoder::decodeSync(const CUpti_ActivitySynchronization2& s, DecodedBatch& out) const {
  if (already_recorded_ && already_recorded_(s.correlationId)) return;
  const SyncName name = syncName(rawValue(s.type));
  store::Sync row;
  row.pid = options_.pid;
  row.tid = -1;  // the record does not say; the API call with the same correlation id does
  row.start_ns = clock_.toStore(s.start);
  row.end_ns = clock_.toStore(s.end);
  row.sync_kind = name.kind;
  row.origin = "cupti";
  row.op = name.op;
  row.stream = idOrUnknown(s.streamId);
  row.correlation_id = s.correlationId;
  out.syncs.push_back(std::move(row));
}

const std::string& ActivityDecoder::apiName(CUpti_CallbackDomain domain, std::uint32_t cbid) {
  const std::uint64_t key = (static_cast<std::uint64_t>(domain) << 32) | cbid;
  auto it = name_cache_.find(key);
  if (it == name_cache_.end()) {
    std::string name = names_ ? plainApiName(names_(domain, cbid)) : std::string();
    if (name.empty()) name = "cbid_" + std::to_string(cbid);
    it = name_cache_.emplace(key, std::move(name)).first;
  }
  return it->second;
}

void ActivityDecoder::decodeApi(const CUpti_ActivityAPI& a, bool runtime, DecodedBatch& out) {
  const bool kept = runtime ? !isNoisyRuntimeApi(a.cbid)
                            : isDriverLaunchApi(a.cbid) || (options_.keep_driver_api && !isNoisyDriverApi(a.cbid));
  if (!kept) return;
  store::ApiCall row;
  row.pid = a.processId;
  row.tid = a.threadId;
  row.start_ns = clock_.toStore(a.start);
  row.end_ns = clock_.toStore(a.end);
  row.name = apiName(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a.cbid);
  row.api = runtime ? "runtime" : "driver";
  row.cbid = a.cbid;
  row.correlation_id = a.correlationId;
  row.return_code = a.returnValue;
  out.api_calls.push_back(std::move(row));
}

void ActivityDecoder::decodeMarker(const CUpti_ActivityMarker2& m, DecodedBatch& out) {
  store::NvtxEvent event;
  event.pid = options_.pid;
  event.tid = -1;
  const std::uint32_t object_kind = rawValue(m.objectKind);
  if (object_kind == CUPTI_ACTIVITY_OBJECT_THREAD || object_kind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
    event.pid = m.objectId.pt.processId;
    event.tid = m.objectId.pt.threadId;
  }
  event.start_ns = event.end_ns = clock_.toStore(m.timestamp);
  event.name = text(m.name);
  event.domain = text(m.domain);
  const std::uint32_t flags = rawValue(m.flags);
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    event.kind = "mark";
    out.nvtx.push_back(std::move(event));
    return;
  }
  const bool is_start = (flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0;
  const bool is_end = (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) != 0;
  if (is_start == is_end) return;  // synchronisation markers and malformed flags carry no range
  event.kind = "range";
  // Buffers complete out of order, so an end may arrive before its start.
  auto open = open_markers_.find(m.id);
  if (open == open_markers_.end() || open->second.is_end == is_end) {
    if (open_markers_.size() >= options_.max_open_nvtx_ranges) {
      ++markers_refused_;
      return;
    }
    open_markers_[m.id] = OpenMarker{is_end, std::move(event)};
    return;
  }
  store::NvtxEvent range = is_start ? std::move(event) : std::move(open->second.event);
  range.end_ns = is_start ? open->second.event.end_ns : event.end_ns;
  open_markers_.erase(open);
  out.nvtx.push_back(std::move(range));
}

void ActivityDecoder::decodeOverhead(const CUpti_ActivityOverhead3& o) {
  auto& total = overheads_[rawValue(o.overheadKind)];
  ++total.count;
  // Saturating: a damaged record must not wrap the total.
  const std::int64_t add = duration(clock_.toStore(o.start), clock_.toStore(o.end));
  total.total_ns = total.total_ns > std::numeric_limits<std::int64_t>::max() - add
                       ? std::numeric_limits<std::int64_t>::max()
                       : total.total_ns + add;
}

void ActivityDecoder::decodeDevice(const CUpti_ActivityDevice5& d, DecodedBatch& out) {
  store::Device row;
  row.device = d.id;
  row.name = text(d.name);
  row.compute_major = d.computeCapabilityMajor;
  row.compute_minor = d.computeCapabilityMinor;
  row.total_memory_bytes = static_cast<std::int64_t>(std::min<std::uint64_t>(
      d.globalMemorySize, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())));
  row.multiprocessor_count = d.numMultiprocessors;
  row.properties = nlohmann::json{
      {"global_memory_bandwidth_kbps", d.globalMemoryBandwidth},
      {"l2_cache_bytes", d.l2CacheSize},
      {"core_clock_khz", d.coreClockRate},
      {"threads_per_warp", d.numThreadsPerWarp},
      {"max_threads_per_block", d.maxThreadsPerBlock},
      {"max_shared_memory_per_block", d.maxSharedMemoryPerBlock},
      {"max_registers_per_block", d.maxRegistersPerBlock},
      {"memcpy_engines", d.numMemcpyEngines},
      {"ecc_enabled", d.eccEnabled != 0},
      {"mig_enabled", d.isMigEnabled != 0},
  }.dump();
  out.devices.push_back(std::move(row));
}

void ActivityDecoder::finish(DecodedBatch& out) {
  std::int64_t unclosed_starts = 0;
  std::int64_t unmatched_ends = 0;
  for (const auto& [id, marker] : open_markers_) (marker.is_end ? unmatched_ends : unclosed_starts)++;
  open_markers_.clear();
  if (unclosed_starts > 0) {
    out.diagnostics.push_back({"cupti", "info", "NVTX ranges still open when tracing stopped", unclosed_starts});
  }
  if (unmatched_ends > 0) {
    out.diagnostics.push_back({"cupti", "warning", "NVTX range ends whose start was never seen", unmatched_ends});
  }
  if (markers_refused_ > 0) {
    out.diagnostics.push_back({"cupti", "warning", "NVTX ranges dropped: too many open at once",
                               static_cast<std::int64_t>(markers_refused_)});
    markers_refused_ = 0;
  }
  for (const auto& [kind, total] : overheads_) {
    out.diagnostics.push_back({"cupti", "info",
                               std::string("CUPTI overhead (") + overheadName(kind) + "): " +
                                   std::to_string(total.total_ns / 1000) + " us in total",
                               total.count});
  }
  overheads_.clear();
  if (unknown_ > 0) {
    out.diagnostics.push_back(
        {"cupti", "info", "CUPTI records of kinds not stored", static_cast<std::int64_t>(unknown_)});
    unknown_ = 0;
  }
}

}  // namespace torchscope::cupti
