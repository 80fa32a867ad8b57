// Records of the store (Records.h): What the job did on the host and the GPU, over time: API calls, kernels, copies,
// syncs, ranges, ops, steps.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "torchscope/base/Clock.h"
#include "torchscope/store/Table.h"

namespace torchscope::store {

struct ApiCall {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  std::string name;        // interned
  std::string api;         // "runtime" | "driver"
  std::int64_t cbid = -1;  // CUPTI callback id
  std::int64_t correlation_id = -1;
  std::int64_t return_code = 0;
  bool operator==(const ApiCall&) const = default;

  static constexpr schema::Table kTable{.name = "api_calls",
                                        .start = "start_ns",
                                        .end = "end_ns",
                                        .indexes = {{{"time", "start_ns"}, {"correlation", "pid, correlation_id"}}}};
  static constexpr auto columns() {
    using R = ApiCall;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),
                      column("tid", &R::tid),
                      column("start_ns", &R::start_ns),
                      column("end_ns", &R::end_ns),
                      interned("name", &R::name),
                      column("api", &R::api),
                      column("cbid", &R::cbid),
                      column("correlation_id", &R::correlation_id),
                      column("return_code", &R::return_code)};
  }
};

struct Kernel {
  std::int64_t pid = 0;
  std::int64_t device = 0;
  std::int64_t context = -1;
  std::int64_t stream = -1;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  std::string name;  // interned
  std::int64_t correlation_id = -1;
  std::int64_t grid_x = -1, grid_y = -1, grid_z = -1;
  std::int64_t block_x = -1, block_y = -1, block_z = -1;
  std::int64_t registers_per_thread = -1;
  std::int64_t static_shared_bytes = -1;
  std::int64_t dynamic_shared_bytes = -1;
  bool operator==(const Kernel&) const = default;

  static constexpr schema::Table kTable{.name = "kernels",
                                        .start = "start_ns",
                                        .end = "end_ns",
                                        .indexes = {{{"time", "start_ns"}, {"correlation", "pid, correlation_id"}}}};
  static constexpr auto columns() {
    using R = Kernel;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),
                      column("device", &R::device),
                      column("context", &R::context),
                      column("stream", &R::stream),
                      column("start_ns", &R::start_ns),
                      column("end_ns", &R::end_ns),
                      interned("name", &R::name),
                      column("correlation_id", &R::correlation_id),
                      column("grid_x", &R::grid_x),
                      column("grid_y", &R::grid_y),
                      column("grid_z", &R::grid_z),
                      column("block_x", &R::block_x),
                      column("block_y", &R::block_y),
                      column("block_z", &R::block_z),
                      column("registers_per_thread", &R::registers_per_thread),
                      column("static_shared_bytes", &R::static_shared_bytes),
                      column("dynamic_shared_bytes", &R::dynamic_shared_bytes)};
  }
};

struct Memcpy {
  std::int64_t pid = 0;
  std::int64_t device = 0;
  std::int64_t stream = -1;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  std::string copy_kind;  // "HtoD" | "DtoH" | "DtoD" | "HtoH" | "PtoP" | "unknown"
  std::int64_t bytes = 0;
  std::string src_kind;  // "pageable" | "pinned" | "device" | "managed" | "unknown"
  std::string dst_kind;
  bool pageable = false;  // either side in pageable host memory
  bool async = false;
  std::int64_t correlation_id = -1;
  bool operator==(const Memcpy&) const = default;

  static constexpr schema::Table kTable{.name = "memcpy",
                                        .start = "start_ns",
                                        .end = "end_ns",
                                        .indexes = {{{"time", "start_ns"}, {"correlation", "pid, correlation_id"}}}};
  static constexpr auto columns() {
    using R = Memcpy;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),           column("device", &R::device),
                      column("stream", &R::stream),     column("start_ns", &R::start_ns),
                      column("end_ns", &R::end_ns),     column("copy_kind", &R::copy_kind),
                      column("bytes", &R::bytes),       column("src_kind", &R::src_kind),
                      column("dst_kind", &R::dst_kind), column("pageable", &R::pageable),
                      column("async", &R::async),       column("correlation_id", &R::correlation_id)};
  }
};

struct Memset {
  std::int64_t pid = 0;
  std::int64_t device = 0;
  std::int64_t stream = -1;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  std::int64_t bytes = 0;
  std::int64_t value = 0;
  std::string memory_kind;
  std::int64_t correlation_id = -1;
  bool operator==(const Memset&) const = default;

  static constexpr schema::Table kTable{.name = "memset",
                                        .start = "start_ns",
                                        .end = "end_ns",
                                        .indexes = {{{"time", "start_ns"}, {"correlation", "pid, correlation_id"}}}};
  static constexpr auto columns() {
    using R = Memset;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),
                      column("device", &R::device),
                      column("stream", &R::stream),
                      column("start_ns", &R::start_ns),
                      column("end_ns", &R::end_ns),
                      column("bytes", &R::bytes),
                      column("value", &R::value),
                      column("memory_kind", &R::memory_kind),
                      column("correlation_id", &R::correlation_id)};
  }
};

// A host-device synchronisation: the host was blocked from start_ns to end_ns.
struct Sync {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  std::string sync_kind;  // "stream" | "device" | "event" | "context" | "stream-wait-event" | "memcpy" | "python"
  std::string origin;     // "cupti" | "python" | "import"
  std::string op;         // interned: the call or op that synchronised ("cudaStreamSynchronize", "aten::item")
  std::int64_t stream = -1;
  std::int64_t correlation_id = -1;
  std::string file;  // interned: the user's source line that caused it
  std::int64_t line = -1;
  std::string function;
  std::string stack;  // JSON array of {"file","line","function"}, innermost last
  bool operator==(const Sync&) const = default;

  static constexpr schema::Table kTable{
      .name = "syncs", .start = "start_ns", .end = "end_ns", .indexes = {{{"time", "start_ns"}}}, .windowed = true};
  static constexpr auto columns() {
    using R = Sync;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),
                      column("tid", &R::tid),
                      column("start_ns", &R::start_ns),
                      column("end_ns", &R::end_ns),
                      column("sync_kind", &R::sync_kind),
                      column("origin", &R::origin),
                      interned("op", &R::op),
                      column("stream", &R::stream),
                      column("correlation_id", &R::correlation_id),
                      interned("file", &R::file),
                      column("line", &R::line),
                      column("function", &R::function),
                      jsonArray("stack", &R::stack)};
  }
};

struct NvtxEvent {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;  // == start_ns for a mark
  std::string name;        // interned
  std::string domain;      // interned
  std::string kind;        // "range" | "mark"
  bool operator==(const NvtxEvent&) const = default;

  static constexpr schema::Table kTable{
      .name = "nvtx", .start = "start_ns", .end = "end_ns", .indexes = {{{"time", "start_ns"}}}};
  static constexpr auto columns() {
    using R = NvtxEvent;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),       column("tid", &R::tid),     column("start_ns", &R::start_ns),
                      column("end_ns", &R::end_ns), interned("name", &R::name), interned("domain", &R::domain),
                      column("kind", &R::kind)};
  }
};

struct CpuOp {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  std::string name;                  // interned
  std::string category;              // "cpu_op" | "user_annotation" | "python_function" | ...
  std::int64_t correlation_id = -1;  // external correlation to API calls
  std::string args;                  // JSON object
  bool operator==(const CpuOp&) const = default;

  static constexpr schema::Table kTable{
      .name = "cpu_ops", .start = "start_ns", .end = "end_ns", .indexes = {{{"time", "start_ns"}}}};
  static constexpr auto columns() {
    using R = CpuOp;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),
                      column("tid", &R::tid),
                      column("start_ns", &R::start_ns),
                      column("end_ns", &R::end_ns),
                      interned("name", &R::name),
                      column("category", &R::category),
                      column("correlation_id", &R::correlation_id),
                      jsonObject("args", &R::args)};
  }
};

// A torch.distributed collective timed by the bridge on the host, from its call to its completion (for an
// asynchronous one, when its future completed), or a DDP gradient bucket's all-reduce.
struct Collective {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  std::string name;     // "all_reduce", "ddp:allreduce", ...
  std::string op;       // the collective: "all_reduce", "allreduce" for a bucket
  std::string backend;  // "nccl", "gloo", ""
  std::int64_t bytes = 0;
  std::string source;        // "torch.distributed" | "ddp"
  bool async = false;        // called with async_op=True
  std::int64_t bucket = -1;  // ddp: the bucket's index
  bool last_bucket = false;  // ddp: the step's last bucket
  bool operator==(const Collective&) const = default;

  static constexpr schema::Table kTable{.name = "collectives",
                                        .start = "start_ns",
                                        .end = "end_ns",
                                        .indexes = {{{"time", "start_ns"}}},
                                        .since_version = 5,
                                        .windowed = true};
  static constexpr auto columns() {
    using R = Collective;
    using namespace schema;
    return std::tuple{
        column("pid", &R::pid),         column("tid", &R::tid),       column("start_ns", &R::start_ns),
        column("end_ns", &R::end_ns),   column("name", &R::name),     column("op", &R::op),
        column("backend", &R::backend), column("bytes", &R::bytes),   column("source", &R::source),
        column("async", &R::async),     column("bucket", &R::bucket), column("last_bucket", &R::last_bucket)};
  }
};

struct Step {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::int64_t index = 0;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  std::string source;  // "optimizer" | "zero_grad" | "backward" | "marker" | "nvtx" | "import"
  bool operator==(const Step&) const = default;

  static constexpr schema::Table kTable{
      .name = "steps", .start = "start_ns", .end = "end_ns", .indexes = {{{"time", "start_ns"}}}};
  static constexpr auto columns() {
    using R = Step;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),           column("tid", &R::tid),       column("step", &R::index),
                      column("start_ns", &R::start_ns), column("end_ns", &R::end_ns), column("source", &R::source)};
  }
};

}  // namespace torchscope::store
