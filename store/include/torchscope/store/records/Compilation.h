// Records of the store (Records.h): torch.compile: compiles, graph breaks and recompiles.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "torchscope/base/Clock.h"
#include "torchscope/store/Table.h"

namespace torchscope::store {

struct Compile {
  std::int64_t pid = 0;
  std::int64_t frame_id = -1;
  std::int64_t frame_compile_id = -1;
  std::int64_t attempt = 0;
  std::int64_t compiled_autograd_id = -1;
  std::string co_name;
  std::string co_filename;
  std::int64_t co_firstlineno = -1;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  // torch's nested cumulative stage times: dynamo_ns contains aot_ns, which contains inductor_ns.
  base::Nanos dynamo_ns = -1;
  base::Nanos aot_ns = -1;
  base::Nanos inductor_ns = -1;
  std::int64_t graph_count = -1;
  std::int64_t graph_op_count = -1;
  std::int64_t graph_node_count = -1;
  std::int64_t guard_count = -1;
  std::int64_t cache_size = -1;
  std::int64_t cache_hit = -1;  // FX graph cache: 1 hit, 0 miss, -1 unknown
  std::string status;           // "ok" | "restarted" | "failed" | "skipped"
  std::string fail_type;
  std::string fail_reason;
  std::string restart_reasons;  // JSON array of strings
  // Inductor's message when it skipped the CUDA graphs this compile asked for ("skipping cudagraphs due to ...");
  // "" when it skipped none, or in a store from before v5.
  std::string cudagraph_skip_reason;
  bool operator==(const Compile&) const = default;

  static constexpr schema::Table kTable{.name = "compiles",
                                        .start = "start_ns",
                                        .end = "end_ns",
                                        .indexes = {{{"frame", "pid, frame_id, frame_compile_id"}}}};
  static constexpr auto columns() {
    using R = Compile;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),
                      column("frame_id", &R::frame_id),
                      column("frame_compile_id", &R::frame_compile_id),
                      column("attempt", &R::attempt),
                      column("compiled_autograd_id", &R::compiled_autograd_id),
                      column("co_name", &R::co_name),
                      column("co_filename", &R::co_filename),
                      column("co_firstlineno", &R::co_firstlineno),
                      column("start_ns", &R::start_ns),
                      column("end_ns", &R::end_ns),
                      column("dynamo_ns", &R::dynamo_ns),
                      column("aot_ns", &R::aot_ns),
                      column("inductor_ns", &R::inductor_ns),
                      column("graph_count", &R::graph_count),
                      column("graph_op_count", &R::graph_op_count),
                      column("graph_node_count", &R::graph_node_count),
                      column("guard_count", &R::guard_count),
                      column("cache_size", &R::cache_size),
                      column("cache_hit", &R::cache_hit),
                      column("status", &R::status),
                      column("fail_type", &R::fail_type),
                      column("fail_reason", &R::fail_reason),
                      jsonArray("restart_reasons", &R::restart_reasons),
                      column("cudagraph_skip_reason", &R::cudagraph_skip_reason).since(5)};
  }
};

struct GraphBreak {
  std::int64_t pid = 0;
  std::int64_t frame_id = -1;
  std::int64_t frame_compile_id = -1;
  std::int64_t attempt = -1;
  base::Nanos ts_ns = 0;
  std::string break_type;  // torch's gb_type, e.g. "Data-dependent branching"
  std::string reason;
  std::string explanation;
  std::string hints;  // JSON array of strings
  std::string file;   // the user's line, not torch's internals
  std::int64_t line = -1;
  std::string function;
  std::string user_stack;      // JSON array of {"file","line","function"}, innermost last
  std::string stack;           // the same with library frames kept: torch's whole user traceback
  std::string gb_id;           // torch's graph-break registry id ("GB0170"), "" before torch 2.7
  bool frame_skipped = false;  // torch could not resume after the break and ran the frame eagerly
  bool operator==(const GraphBreak&) const = default;

  static constexpr schema::Table kTable{.name = "graph_breaks", .start = "ts_ns", .end = "ts_ns"};
  static constexpr auto columns() {
    using R = GraphBreak;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),
                      column("frame_id", &R::frame_id),
                      column("frame_compile_id", &R::frame_compile_id),
                      column("attempt", &R::attempt),
                      column("ts_ns", &R::ts_ns),
                      column("break_type", &R::break_type),
                      column("reason", &R::reason),
                      column("explanation", &R::explanation),
                      jsonArray("hints", &R::hints),
                      column("file", &R::file),
                      column("line", &R::line),
                      column("function", &R::function),
                      jsonArray("user_stack", &R::user_stack),
                      jsonArray("stack", &R::stack),
                      column("gb_id", &R::gb_id),
                      column("frame_skipped", &R::frame_skipped)};
  }
};

struct Recompile {
  std::int64_t pid = 0;
  std::int64_t frame_id = -1;
  std::int64_t frame_compile_id = -1;
  base::Nanos ts_ns = 0;
  std::string co_name;
  std::string co_filename;
  std::int64_t co_firstlineno = -1;
  std::string guard_failures;  // JSON array of strings
  std::string cause;           // store::classifyRecompileCause: "dynamic-shape" | "python-scalar" | ...
  std::int64_t cache_size = -1;
  bool limit_hit = false;    // the recompile limit was hit: the frame falls back to eager
  std::string cause_detail;  // what changed: the tensor, "grad_mode", the guarded expression, ...
  std::string stack;         // JSON: the Python stack that called the compiled code, library frames kept
  std::string entry_file;    // the torch.compile call (or decorator) that compiled the region
  std::int64_t entry_line = -1;
  std::string value_kind;  // where a guarded Python value comes from: "optimizer", "attribute", "item", ...
  std::string value_file;  // the line the user writes that value at
  std::int64_t value_line = -1;
  bool operator==(const Recompile&) const = default;

  static constexpr schema::Table kTable{.name = "recompiles", .start = "ts_ns", .end = "ts_ns"};
  static constexpr auto columns() {
    using R = Recompile;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),
                      column("frame_id", &R::frame_id),
                      column("frame_compile_id", &R::frame_compile_id),
                      column("ts_ns", &R::ts_ns),
                      column("co_name", &R::co_name),
                      column("co_filename", &R::co_filename),
                      column("co_firstlineno", &R::co_firstlineno),
                      jsonArray("guard_failures", &R::guard_failures),
                      column("cause", &R::cause),
                      column("cache_size", &R::cache_size),
                      column("limit_hit", &R::limit_hit),
                      column("cause_detail", &R::cause_detail),
                      jsonArray("stack", &R::stack),
                      column("entry_file", &R::entry_file),
                      column("entry_line", &R::entry_line),
                      column("value_kind", &R::value_kind),
                      column("value_file", &R::value_file),
                      column("value_line", &R::value_line)};
  }
};

}  // namespace torchscope::store
