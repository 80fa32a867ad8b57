// The C ABI of collector.h: turns the bridge's JSON objects into store records. Nothing thrown
// below may leave this file.
#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "Collector.h"
#include "Signals.h"
#include "torchscope/collector/collector.h"
#include "torchscope/store/Classify.h"
#include "torchscope/store/UserCode.h"

namespace torchscope::collector {
namespace {

using nlohmann::json;

std::int64_t currentThreadId() { return static_cast<std::int64_t>(syscall(SYS_gettid)); }

std::int64_t integer(const json& object, const char* key, std::int64_t fallback = -1) {
  const auto it = object.find(key);
  if (it == object.end()) return fallback;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_number_float()) return static_cast<std::int64_t>(it->get<double>());
  if (it->is_boolean()) return it->get<bool>() ? 1 : 0;
  return fallback;
}

std::string text(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// A JSON array column: kept as given when it is an array, "[]" otherwise.
std::string array(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_array() ? it->dump() : "[]";
}

bool recordCompile(Collector& collector, const json& in) {
  store::Compile out;
  out.pid = getpid();
  out.frame_id = integer(in, "frame_id");
  out.frame_compile_id = integer(in, "frame_compile_id");
  out.attempt = integer(in, "attempt", 0);
  out.compiled_autograd_id = integer(in, "compiled_autograd_id");
  out.co_name = text(in, "co_name");
  out.co_filename = text(in, "co_filename");
  out.co_firstlineno = integer(in, "co_firstlineno");
  out.start_ns = integer(in, "start_ns", 0);
  out.end_ns = integer(in, "end_ns", out.start_ns);
  out.dynamo_ns = integer(in, "dynamo_ns");
  out.aot_ns = integer(in, "aot_ns");
  out.inductor_ns = integer(in, "inductor_ns");
  out.graph_count = integer(in, "graph_count");
  out.graph_op_count = integer(in, "graph_op_count");
  out.graph_node_count = integer(in, "graph_node_count");
  out.guard_count = integer(in, "guard_count");
  out.cache_size = integer(in, "cache_size");
  out.cache_hit = integer(in, "cache_hit");
  out.status = text(in, "status");
  out.fail_type = text(in, "fail_type");
  out.fail_reason = text(in, "fail_reason");
  out.restart_reasons = array(in, "restart_reasons");
  collector.tally().compiles += 1;
  return collector.add(std::move(out));
}

bool recordGraphBreak(Collector& collector, const json& in) {
  store::GraphBreak out;
  out.pid = getpid();
  out.frame_id = integer(in, "frame_id");
  out.frame_compile_id = integer(in, "frame_compile_id");
  out.attempt = integer(in, "attempt");
  out.ts_ns = integer(in, "ts_ns", 0);
  out.break_type = text(in, "break_type");
  out.reason = text(in, "reason");
  out.explanation = text(in, "explanation");
  out.hints = array(in, "hints");
  out.file = text(in, "file");
  out.line = integer(in, "line");
  out.function = text(in, "function");
  out.user_stack = array(in, "user_stack");
  out.stack = array(in, "stack");
  out.gb_id = text(in, "gb_id");
  out.frame_skipped = integer(in, "frame_skipped", 0) == 1;
  collector.tally().graph_breaks += 1;
  return collector.add(std::move(out));
}

// The causes of each compiled frame's recompiles so far, per process: a recompile's own cause is told apart from
// the failures of cache entries that earlier recompiles were for (store::classifyRecompileCause).
std::vector<store::RecompileCause> earlierCauses(std::int64_t pid, std::int64_t frame_id,
                                                 const store::RecompileCause* add = nullptr) {
  static std::mutex lock;
  static std::map<std::pair<std::int64_t, std::int64_t>, std::vector<store::RecompileCause>> causes;
  const std::lock_guard<std::mutex> guard(lock);
  auto& known = causes[{pid, frame_id}];
  if (add != nullptr) known.push_back(*add);
  return known;
}

bool recordRecompile(Collector& collector, const json& in) {
  store::Recompile out;
  out.pid = getpid();
  out.frame_id = integer(in, "frame_id");
  out.frame_compile_id = integer(in, "frame_compile_id");
  out.ts_ns = integer(in, "ts_ns", 0);
  out.co_name = text(in, "co_name");
  out.co_filename = text(in, "co_filename");
  out.co_firstlineno = integer(in, "co_firstlineno");
  out.guard_failures = array(in, "guard_failures");
  out.cache_size = integer(in, "cache_size");
  // Classified here so that the live collector and the importers agree on the same text.
  std::string guards;
  if (const auto it = in.find("guard_failures"); it != in.end() && it->is_array()) {
    for (const json& guard : *it) guards += (guard.is_string() ? guard.get<std::string>() : guard.dump()) + "\n";
  }
  store::RecompileCause cause = store::classifyRecompileCause(guards, earlierCauses(out.pid, out.frame_id));
  (void)earlierCauses(out.pid, out.frame_id, &cause);
  out.cause = std::move(cause.cause);
  out.cause_detail = std::move(cause.detail);
  out.limit_hit = integer(in, "limit_hit", 0) == 1 || store::isRecompileLimitHit(text(in, "message"));
  out.stack = array(in, "stack");
  out.entry_file = text(in, "entry_file");
  out.entry_line = integer(in, "entry_line");
  out.value_kind = text(in, "value_kind");
  out.value_file = text(in, "value_file");
  out.value_line = integer(in, "value_line");
  collector.tally().recompiles += 1;
  return collector.add(std::move(out));
}

bool recordSync(Collector& collector, const json& in) {
  store::Sync out;
  out.pid = getpid();
  out.tid = currentThreadId();
  out.start_ns = integer(in, "start_ns", 0);
  out.end_ns = integer(in, "end_ns", out.start_ns);
  out.sync_kind = in.contains("sync_kind") ? text(in, "sync_kind") : "python";
  out.origin = "python";
  out.op = text(in, "op");
  out.stream = integer(in, "stream");
  out.file = text(in, "file");
  out.line = integer(in, "line");
  out.function = text(in, "function");
  out.stack = array(in, "stack");
  collector.tally().syncs += 1;
  return collector.add(std::move(out));
}

// A host-timed range from the bridge as a cpu_ops row of `category`: a collective (torch.distributed on the CPU,
// from its call to its completion), a compiled region's calls of one step, a compile's CUDA-graph outcome.
bool recordHostRange(Collector& collector, const json& in, std::string category) {
  store::CpuOp out;
  out.pid = getpid();
  out.tid = integer(in, "tid", currentThreadId());
  out.start_ns = integer(in, "start_ns", 0);
  out.end_ns = integer(in, "end_ns", out.start_ns);
  out.name = text(in, "name");
  out.category = std::move(category);
  out.args = in.contains("args") && in["args"].is_object() ? in["args"].dump() : "{}";
  return collector.add(std::move(out));
}

bool recordDevice(Collector& collector, const json& in) {
  store::Device out;
  out.device = integer(in, "device", 0);
  out.name = text(in, "name");
  out.compute_major = integer(in, "compute_major");
  out.compute_minor = integer(in, "compute_minor");
  out.total_memory_bytes = integer(in, "total_memory_bytes");
  out.multiprocessor_count = integer(in, "multiprocessor_count");
  out.properties = in.contains("properties") ? in["properties"].dump() : "{}";
  return collector.add(std::move(out));
}

// One step end's allocator figures: {"ts_ns", "step", "device", "values": {series: value}}.
bool recordMemorySamples(Collector& collector, const json& in) {
  const auto values = in.find("values");
  if (values == in.end() || !values->is_object()) return false;
  const std::int64_t pid = getpid();
  const std::int64_t device = integer(in, "device");
  const std::int64_t ts_ns = integer(in, "ts_ns", 0);
  const std::int64_t step = integer(in, "step");
  bool all = true;
  for (const auto& [series, value] : values->items()) {
    if (!value.is_number()) continue;
    all = collector.add(store::MemorySample{pid, device, series, ts_ns, step, value.get<std::int64_t>()}) && all;
  }
  return all;
}

bool recordMemoryHolder(Collector& collector, const json& in) {
  store::MemoryHolder out;
  out.pid = getpid();
  out.ts_ns = integer(in, "ts_ns", 0);
  out.step = integer(in, "step");
  out.kind = text(in, "kind");
  out.name = text(in, "name");
  out.file = text(in, "file");
  out.line = integer(in, "line");
  out.function = text(in, "function");
  out.first_step = integer(in, "first_step");
  out.size_before = integer(in, "size_before");
  out.size_after = integer(in, "size_after");
  out.bytes = integer(in, "bytes");
  out.stack = array(in, "stack");
  return collector.add(std::move(out));
}

std::vector<std::string> strings(const json& object, const char* key) {
  std::vector<std::string> values;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return values;
  for (const json& value : *it) {
    if (value.is_string()) values.push_back(value.get<std::string>());
  }
  return values;
}

// The job's user-code roots: kept for locating GPU syncs and stored as run attributes for the analyzer.
bool recordCodeRoots(Collector& collector, const json& in) {
  store::CodeRoots roots{strings(in, "user"), strings(in, "library")};
  const bool stored = collector.add(store::RunAttribute{std::string(store::kUserRootsAttribute), store::rootsJson(roots.user)}) &&
                      collector.add(store::RunAttribute{std::string(store::kLibraryRootsAttribute),
                                                        store::rootsJson(roots.library)});
  collector.setCodeRoots(std::move(roots));
  return stored;
}

bool recordRun(Collector& collector, const json& in) {
  bool all = true;
  for (const auto& [key, value] : in.items()) {
    all = collector.setRunField(key, value.is_string() ? value.get<std::string>() : value.dump()) && all;
  }
  return all;
}

// Records of what the job does step by step: kept only inside the capture window.
bool isWindowed(const std::string& kind) {
  return kind == "sync" || kind == "memory" || kind == "memory_holder" || kind == "collective";
}

bool record(const std::string& kind, const json& in) {
  Collector& collector = Collector::instance();
  if (!collector.active() || !in.is_object()) return false;
  if (isWindowed(kind) && !collector.windowOpen()) return false;
  if (kind == "compile") return recordCompile(collector, in);
  if (kind == "graph_break") return recordGraphBreak(collector, in);
  if (kind == "recompile") return recordRecompile(collector, in);
  if (kind == "sync") return recordSync(collector, in);
  if (kind == "device") return recordDevice(collector, in);
  if (kind == "memory") return recordMemorySamples(collector, in);
  if (kind == "memory_holder") return recordMemoryHolder(collector, in);
  if (kind == "collective" || kind == "compiled_region" || kind == "cudagraphs" || kind == "op_census") {
    return recordHostRange(collector, in, kind);
  }
  if (kind == "run") return recordRun(collector, in);
  if (kind == "code_roots") return recordCodeRoots(collector, in);
  if (kind == "attribute") return collector.add(store::RunAttribute{text(in, "key"), text(in, "value")});
  if (kind == "diagnostic") {
    const std::string severity = text(in, "severity");
    collector.diagnostic("bridge", severity.empty() ? "warning" : severity, text(in, "message"));
    collector.tally().notes += 1;
    return true;
  }
  return false;
}

}  // namespace
}  // namespace torchscope::collector

using torchscope::collector::Collector;

extern "C" {

__attribute__((visibility("default"))) int torchscope_is_active(void) {
  try {
    return Collector::instance().active() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

__attribute__((visibility("default"))) const char* torchscope_store_path(void) {
  try {
    // One copy per process, kept for the caller: the path never changes once open.
    static thread_local std::string path;
    path = Collector::instance().storePath();
    return path.c_str();
  } catch (...) {
    return "";
  }
}

__attribute__((visibility("default"))) int torchscope_record_json(const char* kind, const char* json) {
  if (kind == nullptr || json == nullptr) return -1;
  try {
    const nlohmann::json parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) return -1;
    return torchscope::collector::record(kind, parsed) ? 0 : -1;
  } catch (...) {
    return -1;
  }
}

__attribute__((visibility("default"))) int torchscope_record_step(int64_t index, int64_t start_ns, int64_t end_ns,
                                                                  const char* source) {
  try {
    Collector& collector = Collector::instance();
    if (!collector.active()) return -1;
    const bool kept = collector.window().admitStep(index, end_ns);
    collector.sampleStepEnd(index, start_ns, end_ns, kept);
    if (!kept) return -1;
    torchscope::store::Step step;
    step.pid = getpid();
    step.tid = torchscope::collector::currentThreadId();
    step.index = index;
    step.start_ns = start_ns;
    step.end_ns = end_ns;
    step.source = source != nullptr ? source : "marker";
    if (!collector.add(std::move(step))) return -1;
    collector.recordStepMemory(index, end_ns);
    collector.tally().steps += 1;
    return 0;
  } catch (...) {
    return -1;
  }
}

__attribute__((visibility("default"))) void torchscope_bridge_started(void) {
  try {
    Collector::instance().bridgeStarted();
    torchscope::collector::installSignalHandlers();
  } catch (...) {
  }
}

__attribute__((visibility("default"))) void torchscope_sampler_start(void) {
  try {
    Collector::instance().startStackSampler();
  } catch (...) {
  }
}

__attribute__((visibility("default"))) void torchscope_sampler_stop(void) {
  try {
    Collector::instance().stopStackSampler();
  } catch (...) {
  }
}

__attribute__((visibility("default"))) int torchscope_window_open(void) {
  try {
    return Collector::instance().windowOpen() ? 1 : 0;
  } catch (...) {
    return 1;
  }
}

__attribute__((visibility("default"))) void torchscope_window_rechain_signal(void) {
  try {
    torchscope::collector::rechainToggleSignal();
  } catch (...) {
  }
}

__attribute__((visibility("default"))) void torchscope_flush(void) {
  try {
    Collector::instance().flush();
  } catch (...) {
  }
}

__attribute__((visibility("default"))) int torchscope_gpu_handover(const char* reason) {
  try {
    return Collector::instance().handOverGpu(reason != nullptr ? reason : "another tool needs CUPTI") ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

__attribute__((visibility("default"))) void torchscope_finish(int exit_code) {
  try {
    const torchscope::collector::DeferredTermination deferred;
    Collector::instance().shutdown(exit_code);
  } catch (...) {
  }
}

}  // extern "C"
