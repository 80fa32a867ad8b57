#include "FixtureLoader.h"

#include <fstream>

#include "torchscope/store/Writer.h"

namespace torchscope::analyzer::testing {

namespace {

using nlohmann::json;
namespace st = torchscope::store;

template <class T>
void get(const json& row, const char* key, T& field) {
  if (row.contains(key)) field = row.at(key).get<T>();
}

// A JSON column given as JSON in the fixture ("[]" when absent).
std::string jsonText(const json& row, const char* key) { return row.contains(key) ? row.at(key).dump() : "[]"; }

st::RunInfo toRun(const json& r) {
  st::RunInfo run;
  get(r, "command_line", run.command_line);
  get(r, "host", run.host);
  get(r, "torch_version", run.torch_version);
  get(r, "gpu_name", run.gpu_name);
  get(r, "start_ns", run.start_ns);
  get(r, "end_ns", run.end_ns);
  get(r, "exit_code", run.exit_code);
  run.source = "fixture";
  return run;
}

void addRow(st::Writer& writer, const std::string& table, const json& r) {
  if (table == "devices") {
    st::Device d;
    get(r, "device", d.device); get(r, "name", d.name); get(r, "compute_major", d.compute_major);
    get(r, "compute_minor", d.compute_minor); get(r, "total_memory_bytes", d.total_memory_bytes);
    d.properties = "{}";
    writer.add(d);
  } else if (table == "run_attributes") {
    writer.add(st::RunAttribute{r.at("key").get<std::string>(), r.at("value").get<std::string>()});
  } else if (table == "api_calls") {
    st::ApiCall a;
    get(r, "pid", a.pid); get(r, "tid", a.tid); get(r, "start_ns", a.start_ns); get(r, "end_ns", a.end_ns);
    get(r, "name", a.name); get(r, "correlation_id", a.correlation_id);
    a.api = "runtime";
    writer.add(a);
  } else if (table == "kernels") {
    st::Kernel k;
    get(r, "pid", k.pid); get(r, "device", k.device); get(r, "stream", k.stream); get(r, "start_ns", k.start_ns);
    get(r, "end_ns", k.end_ns); get(r, "name", k.name); get(r, "correlation_id", k.correlation_id);
    writer.add(k);
  } else if (table == "memcpy") {
    st::Memcpy m;
    get(r, "pid", m.pid); get(r, "device", m.device); get(r, "start_ns", m.start_ns); get(r, "end_ns", m.end_ns);
    get(r, "copy_kind", m.copy_kind); get(r, "bytes", m.bytes); get(r, "src_kind", m.src_kind);
    get(r, "dst_kind", m.dst_kind); get(r, "pageable", m.pageable); get(r, "async", m.async);
    writer.add(m);
  } else if (table == "syncs") {
    st::Sync s;
    get(r, "pid", s.pid); get(r, "tid", s.tid); get(r, "start_ns", s.start_ns); get(r, "end_ns", s.end_ns);
    get(r, "sync_kind", s.sync_kind); get(r, "origin", s.origin); get(r, "op", s.op); get(r, "file", s.file);
    get(r, "line", s.line); get(r, "function", s.function);
    s.stack = jsonText(r, "stack");
    writer.add(s);
  } else if (table == "cpu_ops") {
    st::CpuOp c;
    get(r, "pid", c.pid); get(r, "tid", c.tid); get(r, "start_ns", c.start_ns); get(r, "end_ns", c.end_ns);
    get(r, "name", c.name);
    c.category = "cpu_op";
    get(r, "category", c.category);
    c.args = "{}";
    writer.add(c);
  } else if (table == "compiles") {
    st::Compile c;
    get(r, "pid", c.pid); get(r, "frame_id", c.frame_id); get(r, "frame_compile_id", c.frame_compile_id);
    get(r, "attempt", c.attempt); get(r, "co_name", c.co_name); get(r, "co_filename", c.co_filename);
    get(r, "co_firstlineno", c.co_firstlineno); get(r, "start_ns", c.start_ns); get(r, "end_ns", c.end_ns);
    get(r, "cache_hit", c.cache_hit); get(r, "graph_count", c.graph_count); get(r, "graph_op_count", c.graph_op_count);
    c.status = "ok";
    get(r, "status", c.status);
    c.restart_reasons = "[]";
    writer.add(c);
  } else if (table == "graph_breaks") {
    st::GraphBreak g;
    get(r, "pid", g.pid); get(r, "frame_id", g.frame_id); get(r, "frame_compile_id", g.frame_compile_id);
    get(r, "ts_ns", g.ts_ns); get(r, "break_type", g.break_type); get(r, "reason", g.reason);
    get(r, "explanation", g.explanation); get(r, "file", g.file); get(r, "line", g.line); get(r, "function", g.function);
    get(r, "gb_id", g.gb_id); get(r, "frame_skipped", g.frame_skipped);
    g.hints = jsonText(r, "hints");
    g.user_stack = jsonText(r, "user_stack");
    g.stack = jsonText(r, "stack");
    writer.add(g);
  } else if (table == "recompiles") {
    st::Recompile c;
    get(r, "pid", c.pid); get(r, "frame_id", c.frame_id); get(r, "frame_compile_id", c.frame_compile_id);
    get(r, "ts_ns", c.ts_ns); get(r, "co_name", c.co_name); get(r, "co_filename", c.co_filename);
    get(r, "co_firstlineno", c.co_firstlineno); get(r, "cause", c.cause); get(r, "limit_hit", c.limit_hit);
    get(r, "cause_detail", c.cause_detail); get(r, "entry_file", c.entry_file); get(r, "entry_line", c.entry_line);
    get(r, "value_kind", c.value_kind); get(r, "value_file", c.value_file); get(r, "value_line", c.value_line);
    c.guard_failures = jsonText(r, "guard_failures");
    c.stack = jsonText(r, "stack");
    writer.add(c);
  } else if (table == "steps") {
    st::Step s;
    get(r, "pid", s.pid); get(r, "tid", s.tid); get(r, "index", s.index); get(r, "start_ns", s.start_ns);
    get(r, "end_ns", s.end_ns);
    s.source = "marker";
    get(r, "source", s.source);
    writer.add(s);
  } else if (table == "memory_samples") {
    st::MemorySample m;
    get(r, "pid", m.pid); get(r, "device", m.device); get(r, "series", m.series); get(r, "ts_ns", m.ts_ns);
    get(r, "step", m.step); get(r, "value", m.value);
    writer.add(m);
  } else if (table == "memory_events") {
    st::MemoryEvent m;
    get(r, "pid", m.pid); get(r, "device", m.device); get(r, "ts_ns", m.ts_ns); get(r, "operation", m.operation);
    get(r, "bytes", m.bytes); get(r, "memory_kind", m.memory_kind); get(r, "total_allocated", m.total_allocated);
    get(r, "total_reserved", m.total_reserved);
    writer.add(m);
  } else if (table == "memory_holders") {
    st::MemoryHolder h;
    get(r, "pid", h.pid); get(r, "ts_ns", h.ts_ns); get(r, "step", h.step); get(r, "kind", h.kind);
    get(r, "name", h.name); get(r, "file", h.file); get(r, "line", h.line); get(r, "function", h.function);
    get(r, "first_step", h.first_step); get(r, "size_before", h.size_before); get(r, "size_after", h.size_after);
    get(r, "bytes", h.bytes);
    h.stack = jsonText(r, "stack");
    writer.add(h);
  } else {
    throw std::runtime_error("unknown fixture table " + table);
  }
}

json expand(const json& entry, std::int64_t i) {
  json row = entry.at("row");
  const std::int64_t shift = entry.value("stride_ns", std::int64_t{0}) * i;
  for (const char* key : {"start_ns", "end_ns", "ts_ns"}) {
    if (row.contains(key)) row[key] = row[key].get<std::int64_t>() + shift;
  }
  for (const auto& key : entry.value("increment", json::array())) {
    const std::string name = key.get<std::string>();
    row[name] = row.value(name, std::int64_t{0}) + i;
  }
  // {"value": 1048576}: the field grows by that much per repetition.
  if (const auto it = entry.find("increment_by"); it != entry.end() && it->is_object()) {
    for (const auto& [name, amount] : it->items()) {
      row[name] = row.value(name, std::int64_t{0}) + amount.get<std::int64_t>() * i;
    }
  }
  return row;
}

}  // namespace

std::string buildStore(const json& fixture, const std::string& store_path) {
  try {
    auto writer = st::Writer::open(store_path);
    if (!writer) return writer.error().message;
    const st::RunInfo run = toRun(fixture.value("run", json::object()));
    (*writer)->setRun(run);
    for (const auto& [table, rows] : fixture.items()) {
      if (table == "run" || table == "description") continue;
      for (const auto& entry : rows) {
        if (entry.contains("repeat")) {
          for (std::int64_t i = 0; i < entry.at("repeat").get<std::int64_t>(); ++i) addRow(**writer, table, expand(entry, i));
        } else {
          addRow(**writer, table, entry);
        }
      }
    }
    auto closed = (*writer)->close(run.end_ns);
    return closed ? "" : closed.error().message;
  } catch (const std::exception& e) {
    return std::string("bad fixture: ") + e.what();
  }
}

std::string buildStoreFromFile(const std::string& fixture_path, const std::string& store_path) {
  std::ifstream in(fixture_path);
  if (!in) return "cannot read " + fixture_path;
  auto fixture = json::parse(in, nullptr, false, true);
  if (fixture.is_discarded()) return "invalid JSON in " + fixture_path;
  return buildStore(fixture, store_path);
}

}  // namespace torchscope::analyzer::testing
