// The C ABI of collector.h: turns the bridge's JSON objects into store records of the table they name (JsonRecord.h
// decodes the columns the table declares; complete() adds what the bridge does not send). Nothing thrown below may
// leave this file.
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
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

std::string text(const json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? "" : textOf(*it);
}

// The tables the bridge writes (by name, through torchscope_record_json); the run is the one-row run table.
using BridgeRecords = std::tuple<store::RunInfo, store::RunAttribute, store::Device, store::Sync, store::Compile,
                                 store::GraphBreak, store::Recompile, store::MemorySample, store::MemoryHolder,
                                 store::Collective, store::CompiledRegion, store::OpCensus, store::Diagnostic>;

// What every record of the bridge gets beside its columns: this process's pid, the calling thread when the
// object names none, and an end at its start when it names none.
template <class T>
void fillOwnColumns(T& out, const json& in) {
  store::schema::forEachColumn<T>([&](const auto& column) {
    if constexpr (std::is_same_v<typename std::decay_t<decltype(column)>::Type, std::int64_t>) {
      if (column.name == "pid") out.*(column.member) = processId();
      if (column.name == "tid" && !in.contains("tid")) out.*(column.member) = threadId();
    }
  });
  if constexpr (!T::kTable.start.empty() && T::kTable.start != T::kTable.end) {
    store::schema::forEachColumn<T>([&](const auto& column) {
      if constexpr (std::is_same_v<typename std::decay_t<decltype(column)>::Type, std::int64_t>) {
        if (column.name != T::kTable.end || in.contains(std::string(T::kTable.end))) return;
        store::schema::forEachColumn<T>([&](const auto& start) {
          if constexpr (std::is_same_v<typename std::decay_t<decltype(start)>::Type, std::int64_t>) {
            if (start.name == T::kTable.start) out.*(column.member) = out.*(start.member);
          }
        });
      }
    });
  }
}

// What the collector adds to a record beyond its columns, and stores it: by default nothing.
template <class T>
bool complete(Collector& collector, T out, const json& /*in*/) {
  return collector.add(std::move(out));
}

bool complete(Collector& collector, store::Compile out, const json& /*in*/) {
  collector.tally().compiles += 1;
  return collector.add(std::move(out));
}

bool complete(Collector& collector, store::GraphBreak out, const json& /*in*/) {
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

bool complete(Collector& collector, store::Recompile out, const json& in) {
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

// A sync torch's sync debug mode reported on the calling thread.
bool complete(Collector& collector, store::Sync out, const json& in) {
  out.tid = threadId();
  if (!in.contains("sync_kind")) out.sync_kind = "python";
  out.origin = "python";
  out.correlation_id = -1;
  collector.tally().syncs += 1;
  return collector.add(std::move(out));
}

// One step end's allocator figures may come as {"ts_ns", "step", "device", "values": {series: value}}: a row per
// series.
bool complete(Collector& collector, store::MemorySample out, const json& in) {
  const auto values = in.find("values");
  if (values == in.end()) return !out.series.empty() && collector.add(std::move(out));
  if (!values->is_object()) return false;
  bool all = true;
  for (const auto& [series, value] : values->items()) {
    if (!value.is_number()) continue;
    all = collector.add(
              store::MemorySample{out.pid, out.device, series, out.ts_ns, out.step, value.get<std::int64_t>()}) &&
          all;
  }
  return all;
}

// The job's user-code roots are kept for locating GPU syncs too, and stored as the analyzer reads them.
bool complete(Collector& collector, store::RunAttribute out, const json& /*in*/) {
  const bool user = out.key == store::kUserRootsAttribute;
  if (user || out.key == store::kLibraryRootsAttribute) {
    const store::CodeRoots given = store::codeRootsFrom({out});
    store::CodeRoots roots = collector.codeRoots();
    (user ? roots.user : roots.library) = user ? given.user : given.library;
    out.value = store::rootsJson(user ? roots.user : roots.library);
    collector.setCodeRoots(std::move(roots));
  }
  return collector.add(std::move(out));
}

bool complete(Collector& collector, store::Diagnostic out, const json& /*in*/) {
  collector.diagnostic("bridge", out.severity.empty() ? "warning" : out.severity, out.message);
  collector.tally().notes += 1;
  return true;
}

// Fields of the one-row run table: each one the object names.
bool recordRun(Collector& collector, const json& in) {
  bool all = true;
  for (const auto& [key, value] : in.items()) {
    all = collector.setRunField(key, value.is_string() ? value.get<std::string>() : value.dump()) && all;
  }
  return all;
}

template <class T>
bool recordOf(Collector& collector, const json& in) {
  if constexpr (T::kTable.keying == store::schema::Keying::kSingleton) {
    return recordRun(collector, in);
  } else {
    // Records of what the job does step by step are kept only inside the capture window.
    if (T::kTable.windowed && !collector.windowOpen()) return false;
    T out = recordFromJson<T>(in);
    fillOwnColumns(out, in);
    return complete(collector, std::move(out), in);
  }
}

// One record of the table named `table`, decoded as its declaration says; false for a table the bridge does not
// write.
bool record(std::string_view table, const json& in) {
  Collector& collector = Collector::instance();
  if (!collector.active() || !in.is_object()) return false;
  return [&]<class... Ts>(std::tuple<Ts...>*) {
    bool stored = false;
    (void)((Ts::kTable.name == table && (stored = recordOf<Ts>(collector, in), true)) || ...);
    return stored;
  }(static_cast<BridgeRecords*>(nullptr));
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

__attribute__((visibility("default"))) int torchscope_record_json(const char* table, const char* json) {
  if (table == nullptr || json == nullptr) return -1;
  try {
    const nlohmann::json parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) return -1;
    return torchscope::collector::record(table, parsed) ? 0 : -1;
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
