// One column list per record type drives both the writer's INSERT and the reader's SELECT,
// so a record and its table cannot drift apart. Interned text columns are stored as
// `<name>_id` in the table and read back through the `<table>_v` view.
#pragma once

#include <string>
#include <string_view>
#include <tuple>

#include "torchscope/store/Records.h"

namespace torchscope::store::tables {

template <class R, class M>
struct Column {
  std::string_view name;
  M R::*member;
  bool interned = false;
};

template <class R, class M>
constexpr Column<R, M> col(std::string_view name, M R::*member) {
  return {name, member, false};
}
template <class R>
constexpr Column<R, std::string> interned(std::string_view name, std::string R::*member) {
  return {name, member, true};
}

template <class T>
struct Traits;

// How rows are keyed: append a new row, replace a row with the same primary key, or the one-row run table.
enum class Keying { kAppend, kReplace, kSingleton };

#define TS_TABLE(Type, table_name, start_col, end_col, keying) \
  template <>                                                  \
  struct Traits<Type> {                                        \
    using Record = Type;                                       \
    static constexpr std::string_view kTable = table_name;     \
    static constexpr std::string_view kStart = start_col;      \
    static constexpr std::string_view kEnd = end_col;          \
    static constexpr Keying kKeying = keying;                  \
    static constexpr auto columns() {                          \
      return std::make_tuple(
#define TS_END_TABLE \
  );                 \
  }                  \
  }                  \
  ;

// The lists keep one table's columns together, which clang-format would spread over the macro's calls (it reads
// TS_END_TABLE's braces as a struct's, so the rest of the file stays as written too).
// clang-format off
TS_TABLE(RunInfo, "run", "", "", Keying::kSingleton)
  col("command_line", &Record::command_line), col("host", &Record::host),
  col("torchscope_version", &Record::torchscope_version), col("python_version", &Record::python_version),
  col("torch_version", &Record::torch_version), col("cuda_version", &Record::cuda_version),
  col("driver_version", &Record::driver_version), col("gpu_name", &Record::gpu_name),
  col("start_ns", &Record::start_ns), col("start_wall_ns", &Record::start_wall_ns), col("end_ns", &Record::end_ns),
  col("exit_code", &Record::exit_code), col("source", &Record::source)
TS_END_TABLE

TS_TABLE(RunAttribute, "run_attributes", "", "", Keying::kReplace)
  col("key", &Record::key), col("value", &Record::value)
TS_END_TABLE

TS_TABLE(Process, "processes", "start_ns", "end_ns", Keying::kReplace)
  col("pid", &Record::pid), col("parent_pid", &Record::parent_pid), col("name", &Record::name),
  col("command_line", &Record::command_line), col("rank", &Record::rank), col("local_rank", &Record::local_rank),
  col("world_size", &Record::world_size), col("start_ns", &Record::start_ns), col("end_ns", &Record::end_ns)
TS_END_TABLE

TS_TABLE(Thread, "threads", "", "", Keying::kReplace)
  col("pid", &Record::pid), col("tid", &Record::tid), col("name", &Record::name)
TS_END_TABLE

TS_TABLE(Device, "devices", "", "", Keying::kReplace)
  col("device", &Record::device), col("name", &Record::name), col("compute_major", &Record::compute_major),
  col("compute_minor", &Record::compute_minor), col("total_memory_bytes", &Record::total_memory_bytes),
  col("multiprocessor_count", &Record::multiprocessor_count), col("properties", &Record::properties)
TS_END_TABLE

TS_TABLE(ApiCall, "api_calls", "start_ns", "end_ns", Keying::kAppend)
  col("pid", &Record::pid), col("tid", &Record::tid), col("start_ns", &Record::start_ns),
  col("end_ns", &Record::end_ns), interned("name", &Record::name), col("api", &Record::api),
  col("cbid", &Record::cbid), col("correlation_id", &Record::correlation_id),
  col("return_code", &Record::return_code)
TS_END_TABLE

TS_TABLE(Kernel, "kernels", "start_ns", "end_ns", Keying::kAppend)
  col("pid", &Record::pid), col("device", &Record::device), col("context", &Record::context),
  col("stream", &Record::stream), col("start_ns", &Record::start_ns), col("end_ns", &Record::end_ns),
  interned("name", &Record::name), col("correlation_id", &Record::correlation_id), col("grid_x", &Record::grid_x),
  col("grid_y", &Record::grid_y), col("grid_z", &Record::grid_z), col("block_x", &Record::block_x),
  col("block_y", &Record::block_y), col("block_z", &Record::block_z),
  col("registers_per_thread", &Record::registers_per_thread),
  col("static_shared_bytes", &Record::static_shared_bytes),
  col("dynamic_shared_bytes", &Record::dynamic_shared_bytes)
TS_END_TABLE

TS_TABLE(Memcpy, "memcpy", "start_ns", "end_ns", Keying::kAppend)
  col("pid", &Record::pid), col("device", &Record::device), col("stream", &Record::stream),
  col("start_ns", &Record::start_ns), col("end_ns", &Record::end_ns), col("copy_kind", &Record::copy_kind),
  col("bytes", &Record::bytes), col("src_kind", &Record::src_kind), col("dst_kind", &Record::dst_kind),
  col("pageable", &Record::pageable), col("async", &Record::async),
  col("correlation_id", &Record::correlation_id)
TS_END_TABLE

TS_TABLE(Memset, "memset", "start_ns", "end_ns", Keying::kAppend)
  col("pid", &Record::pid), col("device", &Record::device), col("stream", &Record::stream),
  col("start_ns", &Record::start_ns), col("end_ns", &Record::end_ns), col("bytes", &Record::bytes),
  col("value", &Record::value), col("memory_kind", &Record::memory_kind),
  col("correlation_id", &Record::correlation_id)
TS_END_TABLE

TS_TABLE(Sync, "syncs", "start_ns", "end_ns", Keying::kAppend)
  col("pid", &Record::pid), col("tid", &Record::tid), col("start_ns", &Record::start_ns),
  col("end_ns", &Record::end_ns), col("sync_kind", &Record::sync_kind), col("origin", &Record::origin),
  interned("op", &Record::op), col("stream", &Record::stream), col("correlation_id", &Record::correlation_id),
  interned("file", &Record::file), col("line", &Record::line), col("function", &Record::function),
  col("stack", &Record::stack)
TS_END_TABLE

TS_TABLE(NvtxEvent, "nvtx", "start_ns", "end_ns", Keying::kAppend)
  col("pid", &Record::pid), col("tid", &Record::tid), col("start_ns", &Record::start_ns),
  col("end_ns", &Record::end_ns), interned("name", &Record::name), interned("domain", &Record::domain),
  col("kind", &Record::kind)
TS_END_TABLE

TS_TABLE(CpuOp, "cpu_ops", "start_ns", "end_ns", Keying::kAppend)
  col("pid", &Record::pid), col("tid", &Record::tid), col("start_ns", &Record::start_ns),
  col("end_ns", &Record::end_ns), interned("name", &Record::name), col("category", &Record::category),
  col("correlation_id", &Record::correlation_id), col("args", &Record::args)
TS_END_TABLE

TS_TABLE(Compile, "compiles", "start_ns", "end_ns", Keying::kAppend)
  col("pid", &Record::pid), col("frame_id", &Record::frame_id), col("frame_compile_id", &Record::frame_compile_id),
  col("attempt", &Record::attempt), col("compiled_autograd_id", &Record::compiled_autograd_id),
  col("co_name", &Record::co_name), col("co_filename", &Record::co_filename),
  col("co_firstlineno", &Record::co_firstlineno), col("start_ns", &Record::start_ns), col("end_ns", &Record::end_ns),
  col("dynamo_ns", &Record::dynamo_ns), col("aot_ns", &Record::aot_ns), col("inductor_ns", &Record::inductor_ns),
  col("graph_count", &Record::graph_count), col("graph_op_count", &Record::graph_op_count),
  col("graph_node_count", &Record::graph_node_count), col("guard_count", &Record::guard_count),
  col("cache_size", &Record::cache_size), col("cache_hit", &Record::cache_hit), col("status", &Record::status),
  col("fail_type", &Record::fail_type), col("fail_reason", &Record::fail_reason),
  col("restart_reasons", &Record::restart_reasons)
TS_END_TABLE

TS_TABLE(GraphBreak, "graph_breaks", "ts_ns", "ts_ns", Keying::kAppend)
  col("pid", &Record::pid), col("frame_id", &Record::frame_id), col("frame_compile_id", &Record::frame_compile_id),
  col("attempt", &Record::attempt), col("ts_ns", &Record::ts_ns), col("break_type", &Record::break_type),
  col("reason", &Record::reason), col("explanation", &Record::explanation), col("hints", &Record::hints),
  col("file", &Record::file), col("line", &Record::line), col("function", &Record::function),
  col("user_stack", &Record::user_stack), col("stack", &Record::stack), col("gb_id", &Record::gb_id),
  col("frame_skipped", &Record::frame_skipped)
TS_END_TABLE

TS_TABLE(Recompile, "recompiles", "ts_ns", "ts_ns", Keying::kAppend)
  col("pid", &Record::pid), col("frame_id", &Record::frame_id), col("frame_compile_id", &Record::frame_compile_id),
  col("ts_ns", &Record::ts_ns), col("co_name", &Record::co_name), col("co_filename", &Record::co_filename),
  col("co_firstlineno", &Record::co_firstlineno), col("guard_failures", &Record::guard_failures),
  col("cause", &Record::cause), col("cache_size", &Record::cache_size), col("limit_hit", &Record::limit_hit),
  col("cause_detail", &Record::cause_detail), col("stack", &Record::stack), col("entry_file", &Record::entry_file),
  col("entry_line", &Record::entry_line), col("value_kind", &Record::value_kind),
  col("value_file", &Record::value_file), col("value_line", &Record::value_line)
TS_END_TABLE

TS_TABLE(Step, "steps", "start_ns", "end_ns", Keying::kAppend)
  col("pid", &Record::pid), col("tid", &Record::tid), col("step", &Record::index), col("start_ns", &Record::start_ns),
  col("end_ns", &Record::end_ns), col("source", &Record::source)
TS_END_TABLE

TS_TABLE(Finding, "findings", "", "", Keying::kAppend)
  col("rule", &Record::rule), col("severity", &Record::severity), col("title", &Record::title),
  col("message", &Record::message), col("file", &Record::file), col("line", &Record::line),
  col("function", &Record::function), col("count", &Record::count), col("impact_seconds", &Record::impact_seconds),
  col("impact_fraction", &Record::impact_fraction), col("evidence", &Record::evidence),
  col("fix_id", &Record::fix_id), col("fix_summary", &Record::fix_summary), col("fix_kind", &Record::fix_kind)
TS_END_TABLE

TS_TABLE(FixExperiment, "fix_experiments", "", "", Keying::kAppend)
  col("fix_id", &Record::fix_id), col("kind", &Record::kind), col("accepted", &Record::accepted),
  col("reason", &Record::reason), col("repetitions", &Record::repetitions),
  col("baseline_step_median_s", &Record::baseline_step_median_s),
  col("candidate_step_median_s", &Record::candidate_step_median_s),
  col("speedup_median", &Record::speedup_median), col("speedup_ci_low", &Record::speedup_ci_low),
  col("speedup_ci_high", &Record::speedup_ci_high), col("total_speedup", &Record::total_speedup),
  col("compile_time_delta_s", &Record::compile_time_delta_s), col("recompiles_after", &Record::recompiles_after),
  col("graph_breaks_after", &Record::graph_breaks_after), col("syncs_after", &Record::syncs_after),
  col("parity_ok", &Record::parity_ok), col("max_rel_diff", &Record::max_rel_diff), col("diff", &Record::diff),
  col("details", &Record::details)
TS_END_TABLE

TS_TABLE(MemorySample, "memory_samples", "ts_ns", "ts_ns", Keying::kAppend)
  col("pid", &Record::pid), col("device", &Record::device), col("series", &Record::series),
  col("ts_ns", &Record::ts_ns), col("step", &Record::step), col("value", &Record::value)
TS_END_TABLE

TS_TABLE(MemoryEvent, "memory_events", "ts_ns", "ts_ns", Keying::kAppend)
  col("pid", &Record::pid), col("device", &Record::device), col("ts_ns", &Record::ts_ns),
  col("operation", &Record::operation), col("bytes", &Record::bytes), col("address", &Record::address),
  col("memory_kind", &Record::memory_kind), col("stream", &Record::stream),
  col("correlation_id", &Record::correlation_id), col("total_allocated", &Record::total_allocated),
  col("total_reserved", &Record::total_reserved), col("file", &Record::file), col("line", &Record::line),
  col("function", &Record::function)
TS_END_TABLE

TS_TABLE(MemoryHolder, "memory_holders", "ts_ns", "ts_ns", Keying::kAppend)
  col("pid", &Record::pid), col("ts_ns", &Record::ts_ns), col("step", &Record::step), col("kind", &Record::kind),
  col("name", &Record::name), col("file", &Record::file), col("line", &Record::line),
  col("function", &Record::function), col("first_step", &Record::first_step),
  col("size_before", &Record::size_before), col("size_after", &Record::size_after), col("bytes", &Record::bytes),
  col("stack", &Record::stack)
TS_END_TABLE

TS_TABLE(StackFrame, "stack_frames", "", "", Keying::kReplace)
  col("id", &Record::id), col("file", &Record::file), col("line", &Record::line), col("function", &Record::function)
TS_END_TABLE

TS_TABLE(Stack, "stacks", "", "", Keying::kReplace)
  col("id", &Record::id), col("parent_id", &Record::parent_id), col("frame_id", &Record::frame_id)
TS_END_TABLE

TS_TABLE(StackSample, "stack_samples", "", "", Keying::kAppend)
  col("pid", &Record::pid), col("tid", &Record::tid), col("step", &Record::step), col("stack_id", &Record::stack_id),
  col("samples", &Record::samples), col("wall_ns", &Record::wall_ns), col("cpu_ns", &Record::cpu_ns)
TS_END_TABLE

TS_TABLE(Diagnostic, "diagnostics", "", "", Keying::kAppend)
  col("source", &Record::source), col("severity", &Record::severity), col("message", &Record::message),
  col("count", &Record::count)
TS_END_TABLE

#undef TS_TABLE
#undef TS_END_TABLE

// T's columns as a constant, built at compile time rather than on every row.
template <class T>
inline constexpr auto kColumns = Traits<T>::columns();

template <class T>
constexpr bool hasInterned() {
  return std::apply([](auto... c) { return (c.interned || ...); }, Traits<T>::columns());
}

// The SQL column a field is stored in.
template <class C>
std::string storedName(const C& column) {
  return column.interned ? std::string(column.name) + "_id" : std::string(column.name);
}

// Parameters a row of T binds.
template <class T>
constexpr int columnCount() {
  return static_cast<int>(std::tuple_size_v<decltype(Traits<T>::columns())>);
}

// INSERT of `rows` rows (VALUES (...), (...)): one statement step for many rows, the rows' parameters
// numbered in order, row after row.
template <class T>
std::string insertSql(int rows = 1) {
  using Tr = Traits<T>;
  std::string names, params;
  if constexpr (Tr::kKeying == Keying::kSingleton) {
    names = "id";
    params = "1";
  }
  std::apply(
      [&](auto... c) {
        ((names += (names.empty() ? "" : ", ") + storedName(c), params += params.empty() ? "?" : ", ?"), ...);
      },
      Tr::columns());
  const char* verb = Tr::kKeying == Keying::kAppend ? "INSERT INTO " : "INSERT OR REPLACE INTO ";
  std::string sql = verb + std::string(Tr::kTable) + " (" + names + ") VALUES (" + params + ")";
  for (int row = 1; row < rows; ++row) sql += ", (" + params + ")";
  return sql;
}

template <class T>
std::string selectSql(bool ranged, bool limited) {
  using Tr = Traits<T>;
  std::string names;
  std::apply([&](auto... c) { ((names += (names.empty() ? "" : ", ") + std::string(c.name)), ...); }, Tr::columns());
  std::string sql = "SELECT " + names + " FROM " + std::string(Tr::kTable) + (hasInterned<T>() ? "_v" : "");
  if (ranged && !Tr::kStart.empty()) {
    sql += " WHERE " + std::string(Tr::kEnd) + " >= ?1 AND " + std::string(Tr::kStart) + " < ?2";
  }
  // Views have no rowid; every table read through a view has an `id` key instead.
  const std::string key = hasInterned<T>() ? "id" : "rowid";
  sql += Tr::kStart.empty() ? " ORDER BY " + key : " ORDER BY " + std::string(Tr::kStart) + ", " + key;
  if (limited) sql += " LIMIT ?3";
  return sql;
}

}  // namespace torchscope::store::tables
