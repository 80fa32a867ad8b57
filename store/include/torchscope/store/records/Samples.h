// Records of the store (Records.h): sampled Python stacks.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "torchscope/base/Clock.h"
#include "torchscope/store/Table.h"

namespace torchscope::store {

// Sampled Python stacks (docs/FORMAT.md, *Sampled stacks*): frames and stacks are interned per store, the
// samples aggregated per step, thread and stack, so that a long job's store stays small.
// One frame of a sampled stack: a line of a function of a file.
struct StackFrame {
  std::int64_t id = 0;
  std::string file;
  std::int64_t line = -1;
  std::string function;
  bool operator==(const StackFrame&) const = default;

  static constexpr schema::Table kTable{.name = "stack_frames", .keying = schema::Keying::kReplace, .since_version = 4};
  static constexpr auto columns() {
    using R = StackFrame;
    using namespace schema;
    return std::tuple{primaryKey("id", &R::id), column("file", &R::file), column("line", &R::line),
                      column("function", &R::function)};
  }
};

// One stack, as a node of a trie: its innermost frame and the stack of its caller (-1 for an outermost frame).
struct Stack {
  std::int64_t id = 0;
  std::int64_t parent_id = -1;
  std::int64_t frame_id = 0;
  bool operator==(const Stack&) const = default;

  static constexpr schema::Table kTable{.name = "stacks", .keying = schema::Keying::kReplace, .since_version = 4};
  static constexpr auto columns() {
    using R = Stack;
    using namespace schema;
    return std::tuple{primaryKey("id", &R::id), column("parent_id", &R::parent_id),
                      references("frame_id", &R::frame_id, "stack_frames(id)")};
  }
};

// The samples one thread spent in one stack during one step.
struct StackSample {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::int64_t step = -1;  // -1: taken outside every kept step
  std::int64_t stack_id = 0;
  std::int64_t samples = 0;
  base::Nanos wall_ns = 0;  // wall time credited: each sample's time since the thread's previous sample
  base::Nanos cpu_ns = -1;  // the thread's CPU time over the same intervals, -1 unknown
  bool operator==(const StackSample&) const = default;

  static constexpr schema::Table kTable{
      .name = "stack_samples", .indexes = {{{"step", "step, tid"}}}, .since_version = 4};
  static constexpr auto columns() {
    using R = StackSample;
    using namespace schema;
    return std::tuple{column("pid", &R::pid),         column("tid", &R::tid),
                      column("step", &R::step),       references("stack_id", &R::stack_id, "stacks(id)"),
                      column("samples", &R::samples), column("wall_ns", &R::wall_ns),
                      column("cpu_ns", &R::cpu_ns)};
  }
};

}  // namespace torchscope::store
