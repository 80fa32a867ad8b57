// Records of the store (Records.h): what the Python bridge measures around the job's own code: the calls of its
// compiled regions and the op census of one eager step.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "torchscope/base/Clock.h"
#include "torchscope/store/Table.h"

namespace torchscope::store {

// The calls of one compiled region (what one torch.compile(...) call returned) summed over one step: written at
// each step end for the regions that ran since the previous one, and at exit (step -1).
struct CompiledRegion {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  base::Nanos start_ns = 0;  // the first call this row sums up
  base::Nanos end_ns = 0;    // the end of its last
  std::string name;          // "Block.forward", or the function's qualified name
  std::int64_t region = -1;  // the region's id in this process, from 1
  std::int64_t step = -1;    // the step whose end wrote the row, -1 at exit
  std::int64_t calls = 0;
  base::Nanos wall_ns = 0;
  std::int64_t compile_calls = 0;  // calls during which torch compiled a frame
  base::Nanos compile_wall_ns = 0;
  std::int64_t cpu_calls = 0;    // calls sampled for the thread's CPU time that compiled nothing
  base::Nanos cpu_ns = 0;        // their CPU time
  base::Nanos cpu_wall_ns = -1;  // their wall time around the CPU reads; -1 unknown
  bool cudagraphs = false;       // its torch.compile call asked for CUDA graphs
  std::string frames;            // JSON array of the Dynamo frame ids compiled under its calls so far
  std::string site_file;         // the user's torch.compile call or decorator
  std::int64_t site_line = -1;
  std::string site_function;
  std::string call_file;  // the user's line that made the region's first call
  std::int64_t call_line = -1;
  std::string call_function;
  bool operator==(const CompiledRegion&) const = default;

  // The frame ids of `frames`.
  [[nodiscard]] std::vector<std::int64_t> frameIds() const;

  static constexpr schema::Table kTable{
      .name = "compiled_regions", .start = "start_ns", .end = "end_ns", .since_version = 5};
  static constexpr auto columns() {
    using R = CompiledRegion;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),
                      column("tid", &R::tid),
                      column("start_ns", &R::start_ns),
                      column("end_ns", &R::end_ns),
                      column("name", &R::name),
                      column("region", &R::region),
                      column("step", &R::step),
                      column("calls", &R::calls),
                      column("wall_ns", &R::wall_ns),
                      column("compile_calls", &R::compile_calls),
                      column("compile_wall_ns", &R::compile_wall_ns),
                      column("cpu_calls", &R::cpu_calls),
                      column("cpu_ns", &R::cpu_ns),
                      column("cpu_wall_ns", &R::cpu_wall_ns),
                      column("cudagraphs", &R::cudagraphs),
                      jsonArray("frames", &R::frames),
                      column("site_file", &R::site_file),
                      column("site_line", &R::site_line),
                      column("site_function", &R::site_function),
                      column("call_file", &R::call_file),
                      column("call_line", &R::call_line),
                      column("call_function", &R::call_function)};
  }
};

// One op name of a census: how often it ran and its time (an object of `frequent_ops`).
struct CensusOp {
  std::string name;
  std::int64_t count = 0;
  base::Nanos ns = 0;
  bool operator==(const CensusOp&) const = default;

  static constexpr auto columns() {
    using R = CensusOp;
    using namespace schema;
    return std::tuple{column("name", &R::name), column("count", &R::count), column("ns", &R::ns)};
  }
};

// One user's line in one context that issued some of the counted step's ops (an object of `sites`).
struct CensusSite {
  std::string context;  // "model" | "backward" | "outside"
  std::string file;
  std::int64_t line = -1;
  std::string function;
  std::string via;  // model: the module's class; else what the line called ("" torch's own ops)
  std::int64_t ops = 0;
  base::Nanos op_ns = 0;
  std::int64_t short_ops = 0;
  base::Nanos short_op_ns = 0;
  base::Nanos gap_ns = 0;    // the Python time before its ops
  std::string frequent_ops;  // JSON array of CensusOp objects, most frequent first
  bool operator==(const CensusSite&) const = default;

  static constexpr auto columns() {
    using R = CensusSite;
    using namespace schema;
    return std::tuple{column("context", &R::context),
                      column("file", &R::file),
                      column("line", &R::line),
                      column("function", &R::function),
                      column("via", &R::via),
                      column("ops", &R::ops),
                      column("op_ns", &R::op_ns),
                      column("short_ops", &R::short_ops),
                      column("short_op_ns", &R::short_op_ns),
                      column("gap_ns", &R::gap_ns),
                      jsonArray("frequent_ops", &R::frequent_ops)};
  }
};

// The bridge's count of the aten ops of one eager step (docs/FORMAT.md, `op_census`).
struct OpCensus {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  base::Nanos start_ns = 0;  // the counted step's start
  base::Nanos end_ns = 0;    // the end of the census's own work, in the next step
  std::int64_t step = -1;
  base::Nanos step_ns = 0;
  std::int64_t ops = 0;
  base::Nanos op_ns = 0;
  std::int64_t short_ops = 0;
  base::Nanos short_op_ns = 0;
  base::Nanos short_op_threshold_ns = 0;
  std::int64_t distinct_ops = 0;
  base::Nanos op_overhead_ns = -1;  // one small eager op's cost; -1 not measured
  std::string frequent_ops;         // JSON array of CensusOp objects, most frequent first
  std::string model;                // the first module the step called, and the user's line that called it
  std::string model_file;
  std::int64_t model_line = -1;
  std::string model_function;
  std::string step_file;  // the user's line that ended the step
  std::int64_t step_line = -1;
  std::string step_function;
  std::string sites;  // JSON array of CensusSite objects, most ops first
  bool operator==(const OpCensus&) const = default;

  [[nodiscard]] std::vector<CensusOp> frequentOps() const;
  [[nodiscard]] std::vector<CensusSite> censusSites() const;

  static constexpr schema::Table kTable{.name = "op_census", .start = "start_ns", .end = "end_ns", .since_version = 5};
  static constexpr auto columns() {
    using R = OpCensus;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),
                      column("tid", &R::tid),
                      column("start_ns", &R::start_ns),
                      column("end_ns", &R::end_ns),
                      column("step", &R::step),
                      column("step_ns", &R::step_ns),
                      column("ops", &R::ops),
                      column("op_ns", &R::op_ns),
                      column("short_ops", &R::short_ops),
                      column("short_op_ns", &R::short_op_ns),
                      column("short_op_threshold_ns", &R::short_op_threshold_ns),
                      column("distinct_ops", &R::distinct_ops),
                      column("op_overhead_ns", &R::op_overhead_ns),
                      jsonArray("frequent_ops", &R::frequent_ops),
                      column("model", &R::model),
                      column("model_file", &R::model_file),
                      column("model_line", &R::model_line),
                      column("model_function", &R::model_function),
                      column("step_file", &R::step_file),
                      column("step_line", &R::step_line),
                      column("step_function", &R::step_function),
                      jsonArray("sites", &R::sites)};
  }
};

// The frequent ops of a site.
[[nodiscard]] std::vector<CensusOp> frequentOpsOf(const CensusSite& site);

}  // namespace torchscope::store
