// Records of the store (Records.h): The run and what it ran on: the run row, its attributes, processes, threads, GPUs,
// diagnostics.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "torchscope/base/Clock.h"
#include "torchscope/store/Table.h"

namespace torchscope::store {

struct RunInfo {
  std::string command_line;
  std::string host;
  std::string torchscope_version;
  std::string python_version;
  std::string torch_version;
  std::string cuda_version;
  std::string driver_version;
  std::string gpu_name;
  base::Nanos start_ns = 0;       // monotonic
  base::Nanos start_wall_ns = 0;  // CLOCK_REALTIME at start_ns: the wall-clock anchor
  base::Nanos end_ns = -1;
  std::int64_t exit_code = -1;
  std::string source;  // "collector", "import:torch_trace", "import:kineto", ...
  bool operator==(const RunInfo&) const = default;

  static constexpr schema::Table kTable{.name = "run", .keying = schema::Keying::kSingleton};
  static constexpr auto columns() {
    using R = RunInfo;
    using namespace schema;
    return std::tuple{column("command_line", &R::command_line),
                      column("host", &R::host),
                      column("torchscope_version", &R::torchscope_version),
                      column("python_version", &R::python_version),
                      column("torch_version", &R::torch_version),
                      column("cuda_version", &R::cuda_version),
                      column("driver_version", &R::driver_version),
                      column("gpu_name", &R::gpu_name),
                      column("start_ns", &R::start_ns),
                      column("start_wall_ns", &R::start_wall_ns),
                      column("end_ns", &R::end_ns),
                      column("exit_code", &R::exit_code),
                      column("source", &R::source)};
  }
};

struct RunAttribute {
  std::string key;
  std::string value;
  bool operator==(const RunAttribute&) const = default;

  static constexpr schema::Table kTable{.name = "run_attributes", .keying = schema::Keying::kReplace};
  static constexpr auto columns() {
    using R = RunAttribute;
    using namespace schema;
    return std::tuple{primaryKey("key", &R::key), column("value", &R::value)};
  }
};

struct Process {
  std::int64_t pid = 0;
  std::int64_t parent_pid = -1;
  std::string name;
  std::string command_line;
  std::int64_t rank = -1;
  std::int64_t local_rank = -1;
  std::int64_t world_size = -1;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = -1;
  bool operator==(const Process&) const = default;

  static constexpr schema::Table kTable{
      .name = "processes", .keying = schema::Keying::kReplace, .start = "start_ns", .end = "end_ns", .open_end = true};
  static constexpr auto columns() {
    using R = Process;
    using namespace schema;
    return std::tuple{primaryKey("pid", &R::pid),
                      column("parent_pid", &R::parent_pid),
                      column("name", &R::name),
                      column("command_line", &R::command_line),
                      column("rank", &R::rank),
                      column("local_rank", &R::local_rank),
                      column("world_size", &R::world_size),
                      column("start_ns", &R::start_ns),
                      column("end_ns", &R::end_ns)};
  }
};

struct Thread {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::string name;
  bool operator==(const Thread&) const = default;

  static constexpr schema::Table kTable{.name = "threads", .keying = schema::Keying::kReplace};
  static constexpr auto columns() {
    using R = Thread;
    using namespace schema;
    return std::tuple{primaryKey("pid", &R::pid), primaryKey("tid", &R::tid), column("name", &R::name)};
  }
};

struct Device {
  std::int64_t device = 0;
  std::string name;
  std::int64_t compute_major = -1;
  std::int64_t compute_minor = -1;
  std::int64_t total_memory_bytes = -1;
  std::int64_t multiprocessor_count = -1;
  std::string properties;  // JSON object of everything else known
  bool operator==(const Device&) const = default;

  static constexpr schema::Table kTable{.name = "devices", .keying = schema::Keying::kReplace};
  static constexpr auto columns() {
    using R = Device;
    using namespace schema;
    return std::tuple{primaryKey("device", &R::device),
                      column("name", &R::name),
                      column("compute_major", &R::compute_major),
                      column("compute_minor", &R::compute_minor),
                      column("total_memory_bytes", &R::total_memory_bytes),
                      column("multiprocessor_count", &R::multiprocessor_count),
                      jsonObject("properties", &R::properties)};
  }
};

// Something the collector or an importer wants the user to know: skipped input, drops, missing torch.
struct Diagnostic {
  std::string source;    // "collector" | "bridge" | "import" | "cupti" | ...
  std::string severity;  // "error" | "warning" | "info"
  std::string message;
  std::int64_t count = 1;
  bool operator==(const Diagnostic&) const = default;

  static constexpr schema::Table kTable{.name = "diagnostics"};
  static constexpr auto columns() {
    using R = Diagnostic;
    using namespace schema;
    return std::tuple{column("source", &R::source), column("severity", &R::severity), column("message", &R::message),
                      column("count", &R::count)};
  }
};

}  // namespace torchscope::store
