// PyTorch profiler (Kineto) Chrome-trace importer. The document is parsed with a callback that
// hands over each element of traceEvents as soon as it is complete and then drops it, so memory
// stays proportional to the records kept, not to the JSON tree. The same callback cuts values
// nested deeper than base::kMaxJsonDepth: nlohmann::json parses iteratively, but the args kept
// are dumped and copied recursively.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>

#include "JsonFields.h"
#include "TraceOps.h"
#include "torchscope/base/JsonText.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/interop/Trace.h"

namespace torchscope::interop {

namespace {

using json_fields::find;
using json_fields::getInt;
using json_fields::getString;
using json_fields::Json;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// "Memcpy HtoD (Pageable -> Device)" -> kind HtoD, source pageable, destination device.
void readCopyName(const std::string& name, store::Memcpy& copy) {
  static const std::set<std::string> kKinds = {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP"};
  static const std::set<std::string> kMemory = {"pageable", "pinned", "device", "managed"};
  copy.copy_kind = "unknown";
  copy.src_kind = "unknown";
  copy.dst_kind = "unknown";
  const auto space = name.find(' ');
  if (space != std::string::npos) {
    const std::string kind = name.substr(space + 1, name.find(' ', space + 1) - space - 1);
    if (kKinds.count(kind) != 0) copy.copy_kind = kind;
  }
  const auto open = name.find('(');
  const auto arrow = name.find(" -> ");
  const auto close = name.rfind(')');
  if (open != std::string::npos && arrow != std::string::npos && close != std::string::npos && open < arrow &&
      arrow < close) {
    const std::string source = lower(name.substr(open + 1, arrow - open - 1));
    const std::string destination = lower(name.substr(arrow + 4, close - arrow - 4));
    if (kMemory.count(source) != 0) copy.src_kind = source;
    if (kMemory.count(destination) != 0) copy.dst_kind = destination;
  }
  copy.pageable = copy.src_kind == "pageable" || copy.dst_kind == "pageable";
}

// Host calls that block until the GPU is done, for traces without cuda_sync events.
std::string blockingCallKind(const std::string& name) {
  if (name == "cudaDeviceSynchronize") return "device";
  if (name == "cuCtxSynchronize") return "context";
  if (name == "cudaStreamSynchronize" || name == "cuStreamSynchronize") return "stream";
  if (name == "cudaEventSynchronize" || name == "cuEventSynchronize") return "event";
  if ((name.rfind("cudaMemcpy", 0) == 0 || name.rfind("cuMemcpy", 0) == 0) && name.find("Async") == std::string::npos &&
      name.find("ToSymbol") == std::string::npos) {
    return "memcpy";
  }
  return {};
}

std::string syncKindOf(const std::string& kineto_kind) {
  const std::string kind = lower(kineto_kind);
  if (kind == "stream sync") return "stream";
  if (kind == "event sync") return "event";
  if (kind == "context sync") return "context";
  if (kind == "device sync") return "device";
  if (kind == "stream wait event") return "stream-wait-event";
  return kind.empty() ? "unknown" : kind;
}

std::string cudaVersionText(std::int64_t version) {
  if (version <= 0) return {};
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

class KinetoParser {
 public:
  KinetoParser(std::string_view name, ImportedTrace& out) : name_(name), out_(out) {}

  template <class Input>
  Result<void> run(Input&& input) {
    bool top_is_object = false;
    std::string top_key;
    bool saw_events = false;
    const auto on_token = [&](int depth, Json::parse_event_t event, Json& parsed) {
      // A key is refused too: nlohmann::json would otherwise keep a discarded placeholder under it for an
      // array refused at its start.
      if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start ||
           event == Json::parse_event_t::key) &&
          static_cast<std::size_t>(depth) >= base::kMaxJsonDepth) {
        if (static_cast<std::size_t>(depth) == base::kMaxJsonDepth) noteCut();
        return false;
      }
      if (depth == 0 && event == Json::parse_event_t::object_start) top_is_object = true;
      if (depth == 1 && event == Json::parse_event_t::key && parsed.is_string()) top_key = parsed.get<std::string>();
      if (depth == 1 && event == Json::parse_event_t::array_start && top_key == "traceEvents") saw_events = true;
      if (depth != 2 || top_key != "traceEvents" || !top_is_object) return true;
      if (event == Json::parse_event_t::object_end) {
        handleEvent(parsed);
        return false;
      }
      if (event == Json::parse_event_t::value || event == Json::parse_event_t::array_end) {
        skip("not an object");
        return false;
      }
      return true;
    };
    Json root = Json::parse(std::forward<Input>(input), on_token, false);
    if (root.is_discarded() && !saw_events) {
      return makeError(ErrorCode::kInvalidArgument, fmt::format("{}: not valid JSON", name_));
    }
    if (!saw_events) {
      return makeError(ErrorCode::kInvalidArgument, fmt::format("{}: JSON without a traceEvents array", name_));
    }
    if (root.is_discarded()) {
      skip("the document is truncated or invalid after this point");
    } else {
      readMetadata(root);
    }
    finish();
    return {};
  }

 private:
  void count(std::string_view what, std::int64_t event, std::string_view why) {
    for (auto& skipped : out_.skipped) {
      if (skipped.file == name_ && skipped.what == what) {
        ++skipped.count;
        return;
      }
    }
    out_.skipped.push_back({std::string(name_), std::string(what), 1, fmt::format("event {}: {}", event, why)});
  }

  void skip(std::string_view why) {
    ++event_index_;
    count("event", event_index_, why);
  }

  // A value of the event being read (the next one) is nested too deep: it is left out, the event kept.
  void noteCut() {
    count("deeply nested value", event_index_ + 1, fmt::format("cut at {} levels of nesting", base::kMaxJsonDepth));
  }

  [[nodiscard]] std::size_t recordsKept() const {
    return out_.count<store::Kernel, store::Memcpy, store::Memset, store::ApiCall, store::CpuOp, store::Step,
                      store::MemoryEvent, store::MemorySample>() +
           sync_events_.size() + flow_targets_.size();
  }

  void handleEvent(const Json& event) {
    if (recordsKept() >= kMaxRecordsPerFile) {
      ++event_index_;
      count("event past the record limit", event_index_, fmt::format("{} records kept", kMaxRecordsPerFile));
      return;
    }
    ++event_index_;
    const std::string phase = getString(event, "ph");
    if (phase == "M") {
      readNameEvent(event);
      return;
    }
    if (phase == "f") {
      const auto pid = json_fields::asInt(find(event, "pid"));
      const auto tid = json_fields::asInt(find(event, "tid"));
      const auto ts = json_fields::microsToNanos(find(event, "ts"));
      const auto id = json_fields::asInt(find(event, "id"));
      if (pid && tid && ts && id) flow_targets_[{*pid, *tid, *ts}] = *id;
      return;
    }
    if (phase == "i" && getString(event, "name") == "[memory]") {
      readMemoryEvent(event);
      return;
    }
    if (phase != "X") return;
    const std::string category = lower(getString(event, "cat"));
    static const std::set<std::string> kKnown = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver",
                                                 "cuda_sync", "cpu_op", "user_annotation", "python_function"};
    if (kKnown.count(category) == 0) return;
    const auto pid = json_fields::asInt(find(event, "pid"));
    const auto tid = json_fields::asInt(find(event, "tid"));
    const auto start = json_fields::microsToNanos(find(event, "ts"));
    const auto duration = json_fields::microsToNanos(find(event, "dur"));
    if (!pid || !tid || !start || !duration || *duration < 0) {
      --event_index_;
      skip(fmt::format("{} event without numeric pid, tid, ts and dur", category));
      return;
    }
    static const Json kNoArgs = Json::object();
    const Json* args_value = find(event, "args");
    const Json& args = args_value != nullptr && args_value->is_object() ? *args_value : kNoArgs;
    const std::string name = getString(event, "name");
    const std::int64_t end = base::saturatingAdd(*start, *duration);
    const std::int64_t correlation = getInt(args, "correlation");
    if (category == "kernel") {
      store::Kernel kernel;
      kernel.pid = *pid;
      kernel.device = getInt(args, "device", *pid);
      kernel.context = getInt(args, "context");
      kernel.stream = getInt(args, "stream", *tid);
      kernel.start_ns = *start;
      kernel.end_ns = end;
      kernel.name = name;
      kernel.correlation_id = correlation;
      readTriple(args, "grid", kernel.grid_x, kernel.grid_y, kernel.grid_z);
      readTriple(args, "block", kernel.block_x, kernel.block_y, kernel.block_z);
      kernel.registers_per_thread = getInt(args, "registers per thread");
      kernel.static_shared_bytes = getInt(args, "shared memory");  // Kineto reports one shared-memory figure
      out_.add(std::move(kernel));
    } else if (category == "gpu_memcpy") {
      store::Memcpy copy;
      copy.pid = *pid;
      copy.device = getInt(args, "device", *pid);
      copy.stream = getInt(args, "stream", *tid);
      copy.start_ns = *start;
      copy.end_ns = end;
      copy.bytes = std::max<std::int64_t>(0, getInt(args, "bytes", 0));
      copy.correlation_id = correlation;
      readCopyName(name, copy);
      out_.add(std::move(copy));
    } else if (category == "gpu_memset") {
      store::Memset memset;
      memset.pid = *pid;
      memset.device = getInt(args, "device", *pid);
      memset.stream = getInt(args, "stream", *tid);
      memset.start_ns = *start;
      memset.end_ns = end;
      memset.bytes = std::max<std::int64_t>(0, getInt(args, "bytes", 0));
      const auto open = name.find('(');
      memset.memory_kind = open == std::string::npos ? "unknown" : lower(name.substr(open + 1, name.find(')', open) - open - 1));
      memset.correlation_id = correlation;
      out_.add(std::move(memset));
    } else if (category == "cuda_runtime" || category == "cuda_driver") {
      store::ApiCall call;
      call.pid = *pid;
      call.tid = *tid;
      call.start_ns = *start;
      call.end_ns = end;
      call.name = name;
      call.api = category == "cuda_runtime" ? "runtime" : "driver";
      call.cbid = getInt(args, "cbid");
      call.correlation_id = correlation;
      noteHost(*pid, *tid);
      out_.add(std::move(call));
    } else if (category == "cuda_sync") {
      store::Sync sync;
      sync.pid = *pid;
      sync.tid = *tid;
      sync.start_ns = *start;
      sync.end_ns = end;
      sync.sync_kind = syncKindOf(getString(args, "cuda_sync_kind").empty() ? name : getString(args, "cuda_sync_kind"));
      sync.origin = "import";
      sync.op = name;
      sync.stream = getInt(args, "stream");
      sync.correlation_id = correlation;
      sync.stack = "[]";
      sync_events_.push_back(std::move(sync));
    } else {
      store::CpuOp op;
      op.pid = *pid;
      op.tid = *tid;
      op.start_ns = *start;
      op.end_ns = end;
      op.name = name;
      op.category = category;
      op.correlation_id = getInt(args, "External id");
      op.args = base::dumpJson(args);
      noteHost(*pid, *tid);
      if (category == "user_annotation" && name.rfind("ProfilerStep#", 0) == 0) {
        const std::string digits = name.substr(13);
        if (!digits.empty() && digits.size() < 18 && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
          out_.add(store::Step{*pid, *tid, std::stoll(digits), *start, end, "import"});
        }
      }
      out_.add(std::move(op));
    }
  }

  // profile_memory=True: one instant event per allocation (Bytes > 0) or release (Bytes < 0) with the
  // allocator's totals after it; the totals become the cpu.* / cuda.* counter series.
  void readMemoryEvent(const Json& event) {
    const auto pid = json_fields::asInt(find(event, "pid"));
    const auto ts = json_fields::microsToNanos(find(event, "ts"));
    const Json* args = find(event, "args");
    if (!pid || !ts || args == nullptr || !args->is_object()) {
      --event_index_;
      skip("[memory] event without numeric pid, ts and args");
      return;
    }
    const bool cuda = getInt(*args, "Device Type", 0) == 1;
    const std::int64_t bytes = getInt(*args, "Bytes", 0);
    store::MemoryEvent record;
    record.pid = *pid;
    record.device = cuda ? getInt(*args, "Device Id", 0) : -1;
    record.ts_ns = *ts;
    record.operation = bytes >= 0 ? "alloc" : "free";
    record.bytes = bytes >= 0 ? bytes : base::saturatingSub(0, bytes);
    record.address = getInt(*args, "Addr");
    record.memory_kind = cuda ? "device" : "cpu";
    record.total_allocated = getInt(*args, "Total Allocated");
    record.total_reserved = getInt(*args, "Total Reserved");
    const std::string prefix = cuda ? "cuda." : "cpu.";
    if (record.total_allocated >= 0) {
      out_.add(store::MemorySample{*pid, record.device, prefix + "allocated", *ts, -1, record.total_allocated});
    }
    if (record.total_reserved >= 0) {
      out_.add(store::MemorySample{*pid, record.device, prefix + "reserved", *ts, -1, record.total_reserved});
    }
    out_.add(std::move(record));
  }

  static void readTriple(const Json& args, std::string_view key, std::int64_t& x, std::int64_t& y, std::int64_t& z) {
    const Json* value = find(args, key);
    if (value == nullptr || !value->is_array() || value->size() != 3) return;
    x = json_fields::asInt(&(*value)[0]).value_or(-1);
    y = json_fields::asInt(&(*value)[1]).value_or(-1);
    z = json_fields::asInt(&(*value)[2]).value_or(-1);
  }

  void noteHost(std::int64_t pid, std::int64_t tid) {
    host_threads_.insert({pid, tid});
    if (main_pid_ < 0) main_pid_ = pid;
  }

  void readNameEvent(const Json& event) {
    const auto pid = json_fields::asInt(find(event, "pid"));
    const auto tid = json_fields::asInt(find(event, "tid"));
    const Json* args = find(event, "args");
    if (!pid || args == nullptr) return;
    const std::string kind = getString(event, "name");
    if (kind == "process_name") process_names_[*pid] = getString(*args, "name");
    if (kind == "thread_name" && tid) thread_names_[{*pid, *tid}] = getString(*args, "name");
  }

  void readMetadata(const Json& root) {
    base_ns_ = getInt(root, "baseTimeNanoseconds", 0);
    if (const Json* devices = find(root, "deviceProperties"); devices != nullptr && devices->is_array()) {
      for (const auto& properties : *devices) {
        if (!properties.is_object()) continue;
        store::Device device;
        device.device = getInt(properties, "id", static_cast<std::int64_t>(out_.rows<store::Device>().size()));
        device.name = getString(properties, "name");
        device.compute_major = getInt(properties, "computeMajor");
        device.compute_minor = getInt(properties, "computeMinor");
        device.total_memory_bytes = getInt(properties, "totalGlobalMem");
        device.multiprocessor_count = getInt(properties, "numSms");
        device.properties = base::dumpJson(properties);
        out_.add(std::move(device));
      }
    }
    if (const Json* info = find(root, "distributedInfo"); info != nullptr && info->is_object()) {
      rank_ = getInt(*info, "rank");
      world_size_ = getInt(*info, "world_size");
      out_.add(store::RunAttribute{fmt::format("distributed.{}", name_), base::dumpJson(*info)});
    }
    out_.run.cuda_version = cudaVersionText(getInt(root, "cuda_runtime_version"));
    out_.run.driver_version = cudaVersionText(getInt(root, "cuda_driver_version"));
  }

  // Older traces carry the correlation only as the id of the `f` flow event that ends on the GPU record.
  template <class Record>
  void correlateByFlow(std::vector<Record>& records) {
    for (auto& record : records) {
      if (record.correlation_id >= 0) continue;
      auto it = flow_targets_.find({record.pid, record.stream, record.start_ns});
      if (it != flow_targets_.end()) record.correlation_id = it->second;
    }
  }

  void finish() {
    correlateByFlow(out_.rows<store::Kernel>());
    correlateByFlow(out_.rows<store::Memcpy>());
    correlateByFlow(out_.rows<store::Memset>());
    // GPU work runs under pid = device; its host process is the one that issued the API call.
    std::unordered_map<std::int64_t, const store::ApiCall*> calls;
    for (const auto& call : out_.rows<store::ApiCall>()) {
      if (call.correlation_id >= 0) calls.emplace(call.correlation_id, &call);
    }
    const auto host_of = [&](std::int64_t correlation, std::int64_t fallback) {
      auto it = calls.find(correlation);
      return it != calls.end() ? it->second->pid : (main_pid_ >= 0 ? main_pid_ : fallback);
    };
    for (auto& kernel : out_.rows<store::Kernel>()) kernel.pid = host_of(kernel.correlation_id, kernel.pid);
    for (auto& memset : out_.rows<store::Memset>()) memset.pid = host_of(memset.correlation_id, memset.pid);
    for (auto& copy : out_.rows<store::Memcpy>()) {
      copy.pid = host_of(copy.correlation_id, copy.pid);
      if (auto it = calls.find(copy.correlation_id); it != calls.end()) copy.async = it->second->name.find("Async") != std::string::npos;
    }
    if (!sync_events_.empty()) {
      for (auto& sync : sync_events_) {
        if (auto it = calls.find(sync.correlation_id); it != calls.end()) {
          sync.pid = it->second->pid;
          sync.tid = it->second->tid;
          sync.op = it->second->name;
        } else if (main_pid_ >= 0) {  // recorded on the GPU's track: blame the main host thread
          sync.pid = main_pid_;
          sync.tid = main_pid_;
        }
        out_.add(std::move(sync));
      }
    } else {
      for (const auto& call : out_.rows<store::ApiCall>()) {
        const std::string kind = blockingCallKind(call.name);
        if (kind.empty()) continue;
        out_.add(store::Sync{call.pid, call.tid, call.start_ns, call.end_ns, kind, "import", call.name, -1,
                             call.correlation_id, "", -1, "", "[]"});
      }
    }
    std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> process_spans;
    const auto widen = [&](std::int64_t pid, std::int64_t start, std::int64_t end) {
      auto [it, inserted] = process_spans.try_emplace(pid, start, end);
      if (!inserted) it->second = {std::min(it->second.first, start), std::max(it->second.second, end)};
    };
    for (const auto& op : out_.rows<store::CpuOp>()) widen(op.pid, op.start_ns, op.end_ns);
    for (const auto& call : out_.rows<store::ApiCall>()) widen(call.pid, call.start_ns, call.end_ns);
    for (const auto& [pid, span] : process_spans) {
      store::Process process;
      process.pid = pid;
      process.name = process_names_.count(pid) != 0 ? process_names_[pid] : fmt::format("pid {}", pid);
      process.rank = rank_;
      process.world_size = world_size_;
      process.start_ns = span.first;
      process.end_ns = span.second;
      out_.add(std::move(process));
    }
    for (const auto& [pid, tid] : host_threads_) {
      auto it = thread_names_.find({pid, tid});
      out_.add(store::Thread{pid, tid, it != thread_names_.end() ? it->second : ""});
    }
    std::set<std::int64_t> known_devices;
    for (const auto& device : out_.rows<store::Device>()) known_devices.insert(device.device);
    for (const auto& kernel : out_.rows<store::Kernel>()) {
      if (known_devices.insert(kernel.device).second) out_.add(store::Device{kernel.device, "", -1, -1, -1, -1, "{}"});
    }
    if (const auto& devices = out_.rows<store::Device>(); !devices.empty()) out_.run.gpu_name = devices.front().name;
    out_.run.source = "import:kineto";
    shiftTimes(out_, base_ns_);
  }

  std::string_view name_;
  ImportedTrace& out_;
  std::int64_t event_index_ = 0;
  std::int64_t main_pid_ = -1;
  std::int64_t rank_ = -1;
  std::int64_t world_size_ = -1;
  std::int64_t base_ns_ = 0;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::int64_t> flow_targets_;
  std::map<std::int64_t, std::string> process_names_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names_;
  std::set<std::pair<std::int64_t, std::int64_t>> host_threads_;
  std::vector<store::Sync> sync_events_;
};

}  // namespace

namespace {

template <class Input>
Result<void> parseKinetoFrom(Input&& input, std::string_view name, ImportedTrace& out) {
  // Each file is parsed on its own: its clock base (baseTimeNanoseconds) applies to it alone.
  ImportedTrace trace;
  try {
    auto parsed = KinetoParser(name, trace).run(std::forward<Input>(input));
    if (!parsed) return parsed;
  } catch (const nlohmann::json::exception&) {  // a library type error on hostile input: report, never crash
    return makeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: not a readable Kineto trace (a value of an unexpected type)", name));
  }
  appendTrace(out, std::move(trace));
  return {};
}

}  // namespace

Result<void> parseKineto(std::string_view text, std::string_view name, ImportedTrace& out) {
  return parseKinetoFrom(text, name, out);
}

Result<void> parseKineto(std::istream& input, std::string_view name, ImportedTrace& out) {
  return parseKinetoFrom(input, name, out);
}

}  // namespace torchscope::interop
