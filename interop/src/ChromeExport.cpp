#include "torchscope/interop/ChromeExport.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "torchscope/base/JsonText.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/store/Files.h"
#include "torchscope/store/Reader.h"

namespace torchscope::interop {

namespace {

using Json = nlohmann::json;

// torch.compile work has no thread of its own in the store: it gets a named track per process.
constexpr std::int64_t kCompileTrack = 0x7fffff00;
// Process ids of store i in a merged trace start at (i + 1) * kMergedPidStride.
constexpr std::int64_t kMergedPidStride = 100'000'000;

std::string quoted(const std::string& text) { return base::dumpJson(Json(text)); }

std::string dumped(const Json& value) { return base::dumpJson(value); }

Json parsedOr(const std::string& text, Json fallback) {
  Json value = base::parseJson(text);
  return value.is_discarded() ? fallback : value;
}

std::string capitalized(std::string word) {
  if (!word.empty()) word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
  return word;
}

// The inverse of the Kineto importer's mapping, so that a round trip keeps the kind.
std::string kinetoSyncKind(const std::string& kind) {
  static const std::map<std::string, std::string> kNames = {{"stream", "Stream Sync"}, {"event", "Event Sync"},
                                                            {"context", "Context Sync"}, {"device", "Device Sync"},
                                                            {"stream-wait-event", "Stream Wait Event"}};
  auto it = kNames.find(kind);
  return it != kNames.end() ? it->second : kind;
}

template <class T>
Result<std::vector<T>> loadAll(const store::Reader& reader) {
  return reader.load<T>();
}

class ChromeWriter {
 public:
  ChromeWriter(std::ostream& out, base::Nanos origin) : out_(out), origin_(origin) {}

  // The next store's events: `origin` on its own clock, its processes and GPUs moved by `pid_offset`.
  void startStore(base::Nanos origin, std::int64_t pid_offset) {
    origin_ = origin;
    pid_offset_ = pid_offset;
  }

  // Microseconds with the nanoseconds kept exactly as three decimals; the magnitude unsigned, so that INT64_MIN
  // has one.
  static std::string micros(base::Nanos ns) {
    const std::uint64_t magnitude = ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
    return fmt::format("{}{}.{:03}", ns < 0 ? "-" : "", magnitude / 1000, magnitude % 1000);
  }

  // A time from the trace's origin: clamped to the int64 range, as the store's times can be any two int64s.
  [[nodiscard]] std::string sinceOrigin(base::Nanos ns) const { return micros(base::saturatingSub(ns, origin_)); }

  [[nodiscard]] std::int64_t tracePid(std::int64_t pid) const { return base::saturatingAdd(pid, pid_offset_); }

  void raw(const std::string& event) {
    out_ << (events_ == 0 ? "\n" : ",\n") << event;
    ++events_;
  }

  void name(std::string_view kind, std::int64_t pid, std::int64_t tid, const std::string& label) {
    raw(fmt::format(R"({{"ph":"M","name":"{}","pid":{},"tid":{},"args":{{"name":{}}}}})", kind, tracePid(pid), tid,
                    quoted(label)));
  }

  void sortIndex(std::int64_t pid, std::int64_t index) {
    raw(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
                    tracePid(pid), index));
  }

  void slice(std::string_view category, const std::string& label, std::int64_t pid, std::int64_t tid, base::Nanos start,
             base::Nanos end, const Json& args) {
    raw(fmt::format(R"({{"ph":"X","cat":"{}","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{}}})", category,
                    quoted(label), tracePid(pid), tid, sinceOrigin(start), micros(base::spanNanos(start, end)),
                    dumped(args)));
  }

  void instant(std::string_view category, const std::string& label, std::int64_t pid, std::int64_t tid, base::Nanos ts,
               const Json& args) {
    raw(fmt::format(R"({{"ph":"i","s":"t","cat":"{}","name":{},"pid":{},"tid":{},"ts":{},"args":{}}})", category,
                    quoted(label), tracePid(pid), tid, sinceOrigin(ts), dumped(args)));
  }

  void counter(const std::string& label, std::int64_t pid, base::Nanos ts, const Json& args) {
    // Counters belong to the process; the tid only keeps every event's fields alike.
    raw(fmt::format(R"({{"ph":"C","name":{},"pid":{},"tid":{},"ts":{},"args":{}}})", quoted(label), pid, pid,
                    sinceOrigin(ts), dumped(args)));
  }

  void flow(char phase, std::int64_t id, std::int64_t pid, std::int64_t tid, base::Nanos ts) {
    raw(fmt::format(R"({{"ph":"{}","id":{},"pid":{},"tid":{},"ts":{},"cat":"ac2g","name":"ac2g"{}}})", phase,
                    tracePid(id), tracePid(pid), tid, sinceOrigin(ts), phase == 'f' ? R"(,"bp":"e")" : ""));
  }

  [[nodiscard]] std::int64_t events() const { return events_; }

 private:
  std::ostream& out_;
  base::Nanos origin_;
  std::int64_t pid_offset_ = 0;
  std::int64_t events_ = 0;
};

struct StoreContents {
  store::RunInfo run;
  std::vector<store::Process> processes;
  std::vector<store::Thread> threads;
  std::vector<store::Device> devices;
  std::vector<store::ApiCall> api_calls;
  std::vector<store::Kernel> kernels;
  std::vector<store::Memcpy> memcpys;
  std::vector<store::Memset> memsets;
  std::vector<store::Sync> syncs;
  std::vector<store::NvtxEvent> nvtx;
  std::vector<store::CpuOp> cpu_ops;
  std::vector<store::Collective> collectives;
  std::vector<store::Compile> compiles;
  std::vector<store::GraphBreak> graph_breaks;
  std::vector<store::Recompile> recompiles;
  std::vector<store::Step> steps;
  std::vector<store::MemorySample> memory_samples;
  std::vector<store::MemoryEvent> memory_events;
};

Result<StoreContents> loadStore(const store::Reader& reader) {
  StoreContents contents;
  auto run = reader.run();
  if (!run) return run.error();
  contents.run = *run;
  Error failure;
  bool failed = false;
  const auto load = [&](auto& rows) {
    using Row = typename std::decay_t<decltype(rows)>::value_type;
    auto loaded = loadAll<Row>(reader);
    if (!loaded) {
      failure = loaded.error();
      failed = true;
      return;
    }
    rows = std::move(*loaded);
  };
  load(contents.processes);
  load(contents.threads);
  load(contents.devices);
  load(contents.api_calls);
  load(contents.kernels);
  load(contents.memcpys);
  load(contents.memsets);
  load(contents.syncs);
  load(contents.nvtx);
  load(contents.cpu_ops);
  // Before v5 the collectives were cpu_ops rows of category `collective`, exported with them.
  if (reader.schemaVersion() >= store::Collective::kTable.since_version) load(contents.collectives);
  load(contents.compiles);
  load(contents.graph_breaks);
  load(contents.recompiles);
  load(contents.steps);
  load(contents.memory_samples);
  load(contents.memory_events);
  if (failed) return failure;
  return contents;
}

// `rank_prefix` ("rank 3: ") names the rank of every track in a merged trace.
void writeNames(const StoreContents& store, ChromeWriter& writer, const std::string& rank_prefix = "") {
  for (const auto& process : store.processes) {
    std::string label = process.name.empty() ? fmt::format("pid {}", process.pid) : process.name;
    if (process.rank >= 0 && label.find("rank") == std::string::npos) label += fmt::format(" (rank {})", process.rank);
    writer.name("process_name", process.pid, 0, rank_prefix + label);
  }
  for (const auto& thread : store.threads) {
    writer.name("thread_name", thread.pid, thread.tid, thread.name.empty() ? fmt::format("thread {}", thread.tid) : thread.name);
  }
  std::map<std::int64_t, std::string> device_names;
  for (const auto& device : store.devices) device_names[device.device] = device.name;
  std::set<std::pair<std::int64_t, std::int64_t>> streams;
  for (const auto& kernel : store.kernels) streams.insert({kernel.device, kernel.stream});
  for (const auto& copy : store.memcpys) streams.insert({copy.device, copy.stream});
  for (const auto& memset : store.memsets) streams.insert({memset.device, memset.stream});
  std::set<std::int64_t> gpus;
  for (const auto& [device, stream] : streams) {
    if (gpus.insert(device).second) {
      const std::string& model = device_names[device];
      writer.name("process_name", device, 0,
                  rank_prefix + (model.empty() ? fmt::format("GPU {}", device) : fmt::format("GPU {} ({})", device, model)));
    }
    writer.name("thread_name", device, stream, fmt::format("stream {}", stream));
  }
  std::set<std::int64_t> compiling;
  for (const auto& compile : store.compiles) compiling.insert(compile.pid);
  for (const auto& graph_break : store.graph_breaks) compiling.insert(graph_break.pid);
  for (const auto& recompile : store.recompiles) compiling.insert(recompile.pid);
  for (std::int64_t pid : compiling) writer.name("thread_name", pid, kCompileTrack, "torch.compile");
}

void writeHost(const StoreContents& store, ChromeWriter& writer) {
  std::set<std::tuple<std::int64_t, std::int64_t, std::string>> annotated_steps;
  for (const auto& op : store.cpu_ops) {
    Json args = parsedOr(op.args, Json::object());
    if (!args.is_object()) args = Json::object();
    if (op.correlation_id >= 0 && !args.contains("External id")) args["External id"] = op.correlation_id;
    writer.slice(op.category.empty() ? "cpu_op" : op.category, op.name, op.pid, op.tid, op.start_ns, op.end_ns, args);
    if (op.name.rfind("ProfilerStep#", 0) == 0) annotated_steps.insert({op.pid, op.start_ns, op.name});
  }
  for (const auto& collective : store.collectives) {
    Json args = Json::object();
    store::schema::forEachColumn<store::Collective>([&](const auto& column) {
      const std::string_view key = column.name;
      if (key == "pid" || key == "tid" || key == "start_ns" || key == "end_ns" || key == "name") return;
      args[std::string(key)] = collective.*(column.member);
    });
    writer.slice("collective", collective.name, collective.pid, collective.tid, collective.start_ns, collective.end_ns,
                 args);
  }
  for (const auto& call : store.api_calls) {
    writer.slice(call.api == "driver" ? "cuda_driver" : "cuda_runtime", call.name, call.pid, call.tid, call.start_ns,
                 call.end_ns, {{"cbid", call.cbid}, {"correlation", call.correlation_id}});
  }
  for (const auto& sync : store.syncs) {
    const std::string label = sync.op.empty() ? kinetoSyncKind(sync.sync_kind) : sync.op;
    Json args = {{"cuda_sync_kind", kinetoSyncKind(sync.sync_kind)}, {"stream", sync.stream}, {"correlation", sync.correlation_id}};
    if (!sync.file.empty()) args["user_line"] = fmt::format("{}:{}", sync.file, sync.line);
    writer.slice("cuda_sync", label, sync.pid, sync.tid, sync.start_ns, sync.end_ns, args);
    writer.instant("sync", "sync: " + label, sync.pid, sync.tid, sync.start_ns, args);
  }
  for (const auto& step : store.steps) {
    const std::string label = fmt::format("ProfilerStep#{}", step.index);
    if (annotated_steps.count({step.pid, step.start_ns, label}) != 0) continue;  // already a user_annotation
    writer.slice("user_annotation", label, step.pid, step.tid, step.start_ns, step.end_ns, {{"source", step.source}});
  }
  for (const auto& event : store.nvtx) {
    if (event.kind == "mark") {
      writer.instant("nvtx", event.name, event.pid, event.tid, event.start_ns, {{"domain", event.domain}});
    } else {
      writer.slice("nvtx", event.name, event.pid, event.tid, event.start_ns, event.end_ns, {{"domain", event.domain}});
    }
  }
}

void writeCompiles(const StoreContents& store, ChromeWriter& writer) {
  const auto millis = [](base::Nanos ns) { return ns < 0 ? Json(nullptr) : Json(static_cast<double>(ns) / 1e6); };
  for (const auto& compile : store.compiles) {
    std::string label = fmt::format("[{}/{}{}] {}", compile.frame_id, compile.frame_compile_id,
                                    compile.attempt > 0 ? fmt::format("_{}", compile.attempt) : "", compile.co_name);
    writer.slice("torch_compile", label, compile.pid, kCompileTrack, compile.start_ns, compile.end_ns,
                 {{"status", compile.status}, {"co_filename", compile.co_filename}, {"co_firstlineno", compile.co_firstlineno},
                  {"dynamo_ms", millis(compile.dynamo_ns)}, {"aot_autograd_ms", millis(compile.aot_ns)},
                  {"inductor_ms", millis(compile.inductor_ns)}, {"cache_hit", compile.cache_hit},
                  {"fail_type", compile.fail_type}, {"fail_reason", compile.fail_reason},
                  {"restart_reasons", parsedOr(compile.restart_reasons, Json::array())}});
  }
  for (const auto& graph_break : store.graph_breaks) {
    const std::string what = graph_break.break_type.empty() ? graph_break.reason.substr(0, graph_break.reason.find('\n'))
                                                             : graph_break.break_type;
    writer.instant("graph_break", "graph break: " + what, graph_break.pid, kCompileTrack, graph_break.ts_ns,
                   {{"compile_id", fmt::format("{}/{}", graph_break.frame_id, graph_break.frame_compile_id)},
                    {"file", graph_break.file}, {"line", graph_break.line}, {"function", graph_break.function},
                    {"reason", graph_break.reason}, {"hints", parsedOr(graph_break.hints, Json::array())}});
  }
  for (const auto& recompile : store.recompiles) {
    writer.instant("recompile", fmt::format("recompile: {} ({})", recompile.co_name, recompile.cause), recompile.pid,
                   kCompileTrack, recompile.ts_ns,
                   {{"compile_id", fmt::format("{}/{}", recompile.frame_id, recompile.frame_compile_id)},
                    {"cause", recompile.cause}, {"limit_hit", recompile.limit_hit},
                    {"guard_failures", parsedOr(recompile.guard_failures, Json::array())}});
  }
}

// Memory as counter tracks of the process that measured it (Perfetto draws one track per name), and
// allocations as Kineto's `[memory]` instant events, so that `import` reads an export back.
void writeMemory(const StoreContents& store, ChromeWriter& writer) {
  for (const auto& sample : store.memory_samples) {
    const std::string label = sample.device < 0 ? sample.series : fmt::format("{} (GPU {})", sample.series, sample.device);
    const bool count = sample.series.ends_with("_count");
    writer.counter(label, sample.pid, sample.ts_ns, {{count ? "count" : "bytes", sample.value}});
  }
  for (const auto& event : store.memory_events) {
    const bool device = event.device >= 0;
    writer.instant("cpu_instant_event", "[memory]", event.pid, event.pid, event.ts_ns,
                   {{"Bytes", event.operation == "free" ? base::saturatingSub(0, event.bytes) : event.bytes},
                    {"Addr", event.address},
                    {"Total Allocated", event.total_allocated},
                    {"Total Reserved", event.total_reserved},
                    {"Device Type", device ? 1 : 0},
                    {"Device Id", event.device},
                    {"operation", event.operation}});
  }
}

// GPU work on pid = device, tid = stream, with a flow from the API call that launched it.
std::int64_t writeDevice(const StoreContents& store, ChromeWriter& writer) {
  std::map<std::int64_t, std::int64_t> process_ordinal;
  for (const auto& call : store.api_calls) process_ordinal.emplace(call.pid, static_cast<std::int64_t>(process_ordinal.size()));
  std::unordered_map<std::int64_t, const store::ApiCall*> launches;
  const auto key = [&](std::int64_t pid, std::int64_t correlation) {
    auto it = process_ordinal.find(pid);
    return it == process_ordinal.end() ? -1 : (it->second << 40) | (correlation & ((1LL << 40) - 1));
  };
  for (const auto& call : store.api_calls) {
    if (call.correlation_id >= 0) launches.emplace(key(call.pid, call.correlation_id), &call);
  }
  std::int64_t flows = 0;
  const auto link = [&](std::int64_t pid, std::int64_t correlation, std::int64_t device, std::int64_t stream,
                        base::Nanos start) {
    if (correlation < 0) return;
    auto it = launches.find(key(pid, correlation));
    if (it == launches.end()) return;
    const std::int64_t id = process_ordinal.size() == 1 ? correlation : it->first;
    writer.flow('s', id, it->second->pid, it->second->tid, it->second->start_ns);
    writer.flow('f', id, device, stream, start);
    ++flows;
  };
  for (const auto& kernel : store.kernels) {
    Json args = {{"device", kernel.device}, {"context", kernel.context}, {"stream", kernel.stream}, {"correlation", kernel.correlation_id}};
    if (kernel.grid_x >= 0) args["grid"] = {kernel.grid_x, kernel.grid_y, kernel.grid_z};
    if (kernel.block_x >= 0) args["block"] = {kernel.block_x, kernel.block_y, kernel.block_z};
    if (kernel.registers_per_thread >= 0) args["registers per thread"] = kernel.registers_per_thread;
    if (kernel.static_shared_bytes >= 0) args["shared memory"] = kernel.static_shared_bytes;
    writer.slice("kernel", kernel.name, kernel.device, kernel.stream, kernel.start_ns, kernel.end_ns, args);
    link(kernel.pid, kernel.correlation_id, kernel.device, kernel.stream, kernel.start_ns);
  }
  for (const auto& copy : store.memcpys) {
    const std::string label = fmt::format("Memcpy {} ({} -> {})", copy.copy_kind, capitalized(copy.src_kind), capitalized(copy.dst_kind));
    writer.slice("gpu_memcpy", label, copy.device, copy.stream, copy.start_ns, copy.end_ns,
                 {{"device", copy.device}, {"stream", copy.stream}, {"correlation", copy.correlation_id}, {"bytes", copy.bytes}});
    link(copy.pid, copy.correlation_id, copy.device, copy.stream, copy.start_ns);
  }
  for (const auto& memset : store.memsets) {
    writer.slice("gpu_memset", fmt::format("Memset ({})", capitalized(memset.memory_kind)), memset.device, memset.stream,
                 memset.start_ns, memset.end_ns,
                 {{"device", memset.device}, {"stream", memset.stream}, {"correlation", memset.correlation_id}, {"bytes", memset.bytes}});
    link(memset.pid, memset.correlation_id, memset.device, memset.stream, memset.start_ns);
  }
  return flows;
}

Json deviceProperties(const StoreContents& store) {
  Json devices = Json::array();
  for (const auto& device : store.devices) {
    Json properties = parsedOr(device.properties, Json::object());
    if (!properties.is_object()) properties = Json::object();
    properties["id"] = device.device;
    if (!device.name.empty()) properties["name"] = device.name;
    if (device.compute_major >= 0) properties["computeMajor"] = device.compute_major;
    if (device.compute_minor >= 0) properties["computeMinor"] = device.compute_minor;
    if (device.total_memory_bytes >= 0) properties["totalGlobalMem"] = device.total_memory_bytes;
    if (device.multiprocessor_count >= 0) properties["numSms"] = device.multiprocessor_count;
    devices.push_back(std::move(properties));
  }
  return devices;
}

}  // namespace

Result<ExportReport> exportChromeTrace(const std::string& store_path, std::ostream& out) {
  auto reader = store::Reader::open(store_path);
  if (!reader) return reader.error();
  auto contents = loadStore(**reader);
  if (!contents) return contents.error();
  auto span = (*reader)->timeSpan();
  if (!span) return span.error();
  const StoreContents& store = *contents;
  const base::Nanos origin = span->has_value() ? (*span)->begin_ns : store.run.start_ns;
  const base::Nanos origin_wall =
      base::saturatingAdd(store.run.start_wall_ns, base::saturatingSub(origin, store.run.start_ns));

  ChromeWriter writer(out, origin);
  out << R"({"schemaVersion":1,"displayTimeUnit":"ms","baseTimeNanoseconds":)" << origin_wall
      << R"(,"deviceProperties":)" << dumped(deviceProperties(store)) << R"(,"traceName":)"
      << quoted(store.run.command_line.empty() ? store_path : store.run.command_line);
  // Kineto's per-file rank: the first process that knows one.
  for (const auto& process : store.processes) {
    if (process.rank < 0) continue;
    Json info = {{"rank", process.rank}};
    if (process.world_size >= 0) info["world_size"] = process.world_size;
    out << R"(,"distributedInfo":)" << dumped(info);
    break;
  }
  out << R"(,"traceEvents":[)";
  writeNames(store, writer);
  writeHost(store, writer);
  writeCompiles(store, writer);
  writeMemory(store, writer);
  ExportReport report;
  report.flows = writeDevice(store, writer);
  out << "\n]}\n";
  report.events = writer.events();
  if (!out) return makeError(ErrorCode::kIo, "could not write the trace");
  return report;
}

Result<ExportReport> exportMergedChromeTrace(const std::vector<std::string>& store_paths, std::ostream& out) {
  struct Part {
    std::string path;
    StoreContents contents;
    base::Nanos begin_wall_ns = 0;
    std::int64_t rank = -1;
  };
  std::vector<Part> parts;
  for (const auto& path : store_paths) {
    auto reader = store::Reader::open(path);
    if (!reader) return reader.error();
    auto contents = loadStore(**reader);
    if (!contents) return contents.error();
    auto span = (*reader)->timeSpan();
    if (!span) return span.error();
    Part part{path, std::move(*contents), 0, -1};
    const base::Nanos begin = span->has_value() ? (*span)->begin_ns : part.contents.run.start_ns;
    part.begin_wall_ns =
        base::saturatingAdd(part.contents.run.start_wall_ns, base::saturatingSub(begin, part.contents.run.start_ns));
    for (const auto& process : part.contents.processes) {
      if (process.rank >= 0) {
        part.rank = process.rank;
        break;
      }
    }
    parts.push_back(std::move(part));
  }
  if (parts.empty()) return makeError(ErrorCode::kInvalidArgument, "no store to export");
  std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.rank < b.rank; });
  // One clock: every store's monotonic times through its wall-clock anchor, from the earliest event of any rank.
  base::Nanos origin_wall = parts.front().begin_wall_ns;
  for (const auto& part : parts) origin_wall = std::min(origin_wall, part.begin_wall_ns);

  ChromeWriter writer(out, 0);
  out << R"({"schemaVersion":1,"displayTimeUnit":"ms","baseTimeNanoseconds":)" << origin_wall
      << R"(,"traceName":)" << quoted(fmt::format("{} stores side by side", parts.size())) << R"(,"traceEvents":[)";
  ExportReport report;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Part& part = parts[i];
    // Above any Linux pid (pid_max is at most 2^22), so that ranks and their GPUs never share a track.
    const std::int64_t offset = static_cast<std::int64_t>(i + 1) * kMergedPidStride;
    const base::Nanos wall_minus_monotonic =
        base::saturatingSub(part.contents.run.start_wall_ns, part.contents.run.start_ns);
    writer.startStore(base::saturatingSub(origin_wall, wall_minus_monotonic), offset);
    const std::string prefix = part.rank >= 0 ? fmt::format("rank {}: ", part.rank) : fmt::format("store {}: ", i);
    writeNames(part.contents, writer, prefix);
    for (const auto& process : part.contents.processes) writer.sortIndex(process.pid, static_cast<std::int64_t>(i) * 2);
    writeHost(part.contents, writer);
    writeCompiles(part.contents, writer);
    report.flows += writeDevice(part.contents, writer);
  }
  out << "\n]}\n";
  report.events = writer.events();
  if (!out) return makeError(ErrorCode::kIo, "could not write the trace");
  return report;
}

namespace {

// The trace goes to a temporary file beside the output, renamed over it only once complete: a failed export
// leaves the output as it was. An output that is one of the stores is refused before anything is written.
template <class Export>
Result<ExportReport> exportToFile(const std::string& output_path, const std::vector<std::string>& store_paths,
                                  Export&& export_to) {
  if (auto writable = store::checkOutputFile(output_path, store_paths); !writable) return writable.error();
  auto file = store::FileReplacement::open(output_path);
  if (!file) return file.error();
  auto report = export_to(file->stream());
  if (!report) return report;
  if (auto committed = file->commit(); !committed) return committed.error();
  return report;
}

}  // namespace

Result<ExportReport> exportMergedChromeTrace(const std::vector<std::string>& store_paths, const std::string& output_path) {
  return exportToFile(output_path, store_paths,
                      [&](std::ostream& out) { return exportMergedChromeTrace(store_paths, out); });
}

Result<ExportReport> exportChromeTrace(const std::string& store_path, const std::string& output_path) {
  return exportToFile(output_path, {store_path}, [&](std::ostream& out) { return exportChromeTrace(store_path, out); });
}

}  // namespace torchscope::interop
