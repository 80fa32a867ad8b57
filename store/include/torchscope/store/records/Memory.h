// Records of the store (Records.h): Memory: series samples, allocation events and the Python objects that hold memory.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "torchscope/base/Clock.h"
#include "torchscope/store/Table.h"

namespace torchscope::store {

// One value of one memory series at one time: host RSS, a CUDA caching-allocator figure, an imported
// profiler total. A series over time is `SELECT ts_ns, value ... WHERE series = ? AND device = ?`.
struct MemorySample {
  std::int64_t pid = 0;
  std::int64_t device = -1;  // GPU index; -1 for host memory
  std::string series;        // "host.rss", "cuda.allocated", ... (docs/FORMAT.md lists them)
  base::Nanos ts_ns = 0;
  std::int64_t step = -1;  // the step that ended at ts_ns; -1 for a sample taken between step ends
  std::int64_t value = 0;  // bytes, or a count for the counter series
  bool operator==(const MemorySample&) const = default;

  static constexpr schema::Table kTable{.name = "memory_samples",
                                        .start = "ts_ns",
                                        .end = "ts_ns",
                                        .indexes = {{{"series", "series, device, ts_ns"}}},
                                        .since_version = 3,
                                        .windowed = true};
  static constexpr auto columns() {
    using R = MemorySample;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),     column("device", &R::device), column("series", &R::series),
                      column("ts_ns", &R::ts_ns), column("step", &R::step),     column("value", &R::value)};
  }
};

// One allocation or release: a CUPTI memory activity record or an imported profiler `[memory]` event.
struct MemoryEvent {
  std::int64_t pid = 0;
  std::int64_t device = -1;  // GPU index; -1 for host memory
  base::Nanos ts_ns = 0;
  std::string operation;   // "alloc" | "free" | "pool-create" | "pool-destroy" | "pool-trim"
  std::int64_t bytes = 0;  // size of the block (positive for a free too)
  std::int64_t address = -1;
  std::string memory_kind;  // "device" | "pinned" | "pageable" | "managed" | "cpu" | "unknown"
  std::int64_t stream = -1;
  std::int64_t correlation_id = -1;   // the CUDA API call that allocated
  std::int64_t total_allocated = -1;  // the allocator's total after the event, -1 unknown
  std::int64_t total_reserved = -1;
  std::string file;  // the user's line that allocated, "" unknown
  std::int64_t line = -1;
  std::string function;
  bool operator==(const MemoryEvent&) const = default;

  static constexpr schema::Table kTable{
      .name = "memory_events", .start = "ts_ns", .end = "ts_ns", .indexes = {{{"time", "ts_ns"}}}, .since_version = 3};
  static constexpr auto columns() {
    using R = MemoryEvent;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),
                      column("device", &R::device),
                      column("ts_ns", &R::ts_ns),
                      column("operation", &R::operation),
                      column("bytes", &R::bytes),
                      column("address", &R::address),
                      column("memory_kind", &R::memory_kind),
                      column("stream", &R::stream),
                      column("correlation_id", &R::correlation_id),
                      column("total_allocated", &R::total_allocated),
                      column("total_reserved", &R::total_reserved),
                      column("file", &R::file),
                      column("line", &R::line),
                      column("function", &R::function)};
  }
};

// A Python object of the user's code that keeps more memory alive step after step: the leak
// evidence the bridge gathers when it sees a holder grow between two sampled steps.
struct MemoryHolder {
  std::int64_t pid = 0;
  base::Nanos ts_ns = 0;
  std::int64_t step = -1;  // the step at which the growth was confirmed
  std::string kind;        // "autograd-graph" | "container"
  std::string name;        // the expression that holds it: "total_loss", "self.history"
  std::string file;        // the user's line that adds to it (the `+=`, the `.append`)
  std::int64_t line = -1;
  std::string function;
  std::int64_t first_step = -1;   // the sampled step the growth was measured from
  std::int64_t size_before = -1;  // autograd nodes or items held at first_step
  std::int64_t size_after = -1;   // the same at `step`
  std::int64_t bytes = -1;        // tensor bytes it holds at `step`, -1 unknown
  std::string stack;              // JSON: the stack of the frame that owns the holder
  bool operator==(const MemoryHolder&) const = default;

  static constexpr schema::Table kTable{
      .name = "memory_holders", .start = "ts_ns", .end = "ts_ns", .since_version = 3, .windowed = true};
  static constexpr auto columns() {
    using R = MemoryHolder;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),
                      column("ts_ns", &R::ts_ns),
                      column("step", &R::step),
                      column("kind", &R::kind),
                      column("name", &R::name),
                      column("file", &R::file),
                      column("line", &R::line),
                      column("function", &R::function),
                      column("first_step", &R::first_step),
                      column("size_before", &R::size_before),
                      column("size_after", &R::size_after),
                      column("bytes", &R::bytes),
                      jsonArray("stack", &R::stack)};
  }
};

}  // namespace torchscope::store
