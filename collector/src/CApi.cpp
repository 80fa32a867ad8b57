// The C ABI of collector.h: turns the bridge's JSON objects into store records (JsonRecord.h decodes the columns
// their tables declare; what follows adds what the bridge does not send). Nothing thrown below may leave this file.
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "Collector.h"
#include "JsonRecord.h"
#include "ProcessIds.h"
#include "Signals.h"
#include "StepBuiltins.h"
#include "torchscope/collector/collector.h"
#include "torchscope/store/Classify.h"
#include "torchscope/store/UserCode.h"

namespace torchscope::collector {
namespace {

using nlohmann::json;

std::int64_t integer(const json& object, const char* key, std::int64_t fallback = -1) {
  const auto it = object.find(key);
  return it == object.end() ? fallback : integerOf(*it, fallback);
}

std::string text(const json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? "" : textOf(*it);
}

bool recordCompile(Collector& collector, const json& in) {
  auto out = recordFromJson<store::Compile>(in);
  out.pid = processId();
  out.end_ns = integer(in, "end_ns", out.start_ns);
  collector.tally().compiles += 1;
  return collector.add(std::move(out));
}

bool recordGraphBreak(Collector& collector, const json& in) {
  auto out = recordFromJson<store::GraphBreak>(in);
  out.pid = processId();
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
  auto out = recordFromJson<store::Recompile>(in);
  out.pid = processId();
  // Classified here so that the live collector and the importers agree on the same text.
  std::string guards;
  if (const auto it = in.find("guard_failures"); it != in.end() && it->is_array()) {
    for (const json& guard : *it) guards += (guard.is_string() ? guard.get<std::string>() : guard.dump()) + "\n";
  }
  store::RecompileCause cause = store::classifyRecompileCause(guards, earlierCauses(out.pid, out.frame_id),
                                                              store::compileIdText(out.frame_id, out.frame_compile_id));
  (void)earlierCauses(out.pid, out.frame_id, &cause);
  out.cause = std::move(cause.cause);
  out.cause_detail = std::move(cause.detail);
  out.limit_hit = out.limit_hit || store::isRecompileLimitHit(text(in, "message"));
  collector.tally().recompiles += 1;
  return collector.add(std::move(out));
}

bool recordSync(Collector& collector, const json& in) {
  auto out = recordFromJson<store::Sync>(in);
  out.pid = processId();
  out.tid = threadId();
  out.end_ns = integer(in, "end_ns", out.start_ns);
  if (!in.contains("sync_kind")) out.sync_kind = "python";
  out.origin = "python";
  out.correlation_id = -1;
  collector.tally().syncs += 1;
  return collector.add(std::move(out));
}

// A host-timed range from the bridge as a cpu_ops row of `category`: a collective (torch.distributed on the CPU,
// from its call to its completion), a compiled region's calls of one step, a compile's CUDA-graph outcome.
bool recordHostRange(Collector& collector, const json& in, std::string category) {
  auto out = recordFromJson<store::CpuOp>(in);
  out.pid = processId();
  out.tid = integer(in, "tid", threadId());
  out.end_ns = integer(in, "end_ns", out.start_ns);
  out.category = std::move(category);
  out.correlation_id = -1;
  return collector.add(std::move(out));
}

bool recordDevice(Collector& collector, const json& in) { return collector.add(recordFromJson<store::Device>(in)); }

// One step end's allocator figures: {"ts_ns", "step", "device", "values": {series: value}}.
bool recordMemorySamples(Collector& collector, const json& in) {
  const auto values = in.find("values");
  if (values == in.end() || !values->is_object()) return false;
  const std::int64_t pid = processId();
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
  auto out = recordFromJson<store::MemoryHolder>(in);
  out.pid = processId();
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
  if (kind == "attribute") return collector.add(recordFromJson<store::RunAttribute>(in));
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
    return Collector::instance().recordStep(index, start_ns, end_ns, source != nullptr ? source : "marker") ? 0 : -1;
  } catch (...) {
    return -1;
  }
}

__attribute__((visibility("default"))) void* torchscope_step_builtins(void) {
  try {
    return torchscope::collector::newStepBuiltins();
  } catch (...) {
    return nullptr;
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
