// One struct per table of the store (docs/FORMAT.md describes each table and column).
// Times are CLOCK_MONOTONIC nanoseconds; -1 marks an unknown integer, "" an unknown text.
// JSON columns hold a JSON document as text.
#pragma once

#include <cstdint>
#include <string>

#include "torchscope/base/Clock.h"

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
};

struct RunAttribute {
  std::string key;
  std::string value;
  bool operator==(const RunAttribute&) const = default;
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
};

struct Thread {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::string name;
  bool operator==(const Thread&) const = default;
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
};

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
};

struct Memcpy {
  std::int64_t pid = 0;
  std::int64_t device = 0;
  std::int64_t stream = -1;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  std::string copy_kind;  // "HtoD" | "DtoH" | "DtoD" | "HtoH" | "PtoP" | "unknown"
  std::int64_t bytes = 0;
  std::string src_kind;   // "pageable" | "pinned" | "device" | "managed" | "unknown"
  std::string dst_kind;
  bool pageable = false;  // either side in pageable host memory
  bool async = false;
  std::int64_t correlation_id = -1;
  bool operator==(const Memcpy&) const = default;
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
};

struct NvtxEvent {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;  // == start_ns for a mark
  std::string name;    // interned
  std::string domain;  // interned
  std::string kind;    // "range" | "mark"
  bool operator==(const NvtxEvent&) const = default;
};

struct CpuOp {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  std::string name;      // interned
  std::string category;  // "cpu_op" | "user_annotation" | "python_function" | ...
  std::int64_t correlation_id = -1;  // external correlation to API calls
  std::string args;      // JSON object
  bool operator==(const CpuOp&) const = default;
};

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
  bool operator==(const Compile&) const = default;
};

struct GraphBreak {
  std::int64_t pid = 0;
  std::int64_t frame_id = -1;
  std::int64_t frame_compile_id = -1;
  std::int64_t attempt = -1;
  base::Nanos ts_ns = 0;
  std::string break_type;   // torch's gb_type, e.g. "Data-dependent branching"
  std::string reason;
  std::string explanation;
  std::string hints;        // JSON array of strings
  std::string file;         // the user's line, not torch's internals
  std::int64_t line = -1;
  std::string function;
  std::string user_stack;   // JSON array of {"file","line","function"}, innermost last
  std::string stack;        // the same with library frames kept: torch's whole user traceback
  std::string gb_id;        // torch's graph-break registry id ("GB0170"), "" before torch 2.7
  bool frame_skipped = false;  // torch could not resume after the break and ran the frame eagerly
  bool operator==(const GraphBreak&) const = default;
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
  bool limit_hit = false;      // the recompile limit was hit: the frame falls back to eager
  std::string cause_detail;    // what changed: the tensor, "grad_mode", the guarded expression, ...
  std::string stack;           // JSON: the Python stack that called the compiled code, library frames kept
  std::string entry_file;      // the torch.compile call (or decorator) that compiled the region
  std::int64_t entry_line = -1;
  std::string value_kind;      // where a guarded Python value comes from: "optimizer", "attribute", "item", ...
  std::string value_file;      // the line the user writes that value at
  std::int64_t value_line = -1;
  bool operator==(const Recompile&) const = default;
};

struct Step {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::int64_t index = 0;
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  std::string source;  // "optimizer" | "zero_grad" | "backward" | "marker" | "nvtx" | "import"
  bool operator==(const Step&) const = default;
};

struct Finding {
  std::string rule;      // "<family>/<cause>"
  std::string severity;  // "error" | "warning" | "info"
  std::string title;
  std::string message;
  std::string file;
  std::int64_t line = -1;
  std::string function;
  std::int64_t count = 1;
  double impact_seconds = 0;
  double impact_fraction = 0;
  std::string evidence;  // JSON
  std::string fix_id;
  std::string fix_summary;
  std::string fix_kind;  // "runtime" | "source" | ""
  bool operator==(const Finding&) const = default;
};

struct FixExperiment {
  std::string fix_id;
  std::string kind;  // "runtime" | "source" | "combined"
  bool accepted = false;
  std::string reason;
  std::int64_t repetitions = 0;
  double baseline_step_median_s = 0;
  double candidate_step_median_s = 0;
  double speedup_median = 0;
  double speedup_ci_low = 0;
  double speedup_ci_high = 0;
  double total_speedup = 0;
  double compile_time_delta_s = 0;
  std::int64_t recompiles_after = -1;
  std::int64_t graph_breaks_after = -1;
  std::int64_t syncs_after = -1;
  bool parity_ok = false;
  double max_rel_diff = 0;
  std::string diff;     // unified diff for source fixes
  std::string details;  // JSON
  bool operator==(const FixExperiment&) const = default;
};

// One value of one memory series at one time: host RSS, a CUDA caching-allocator figure, an imported
// profiler total. A series over time is `SELECT ts_ns, value ... WHERE series = ? AND device = ?`.
struct MemorySample {
  std::int64_t pid = 0;
  std::int64_t device = -1;  // GPU index; -1 for host memory
  std::string series;        // "host.rss", "cuda.allocated", ... (docs/FORMAT.md lists them)
  base::Nanos ts_ns = 0;
  std::int64_t step = -1;    // the step that ended at ts_ns; -1 for a sample taken between step ends
  std::int64_t value = 0;    // bytes, or a count for the counter series
  bool operator==(const MemorySample&) const = default;
};

// One allocation or release: a CUPTI memory activity record or an imported profiler `[memory]` event.
struct MemoryEvent {
  std::int64_t pid = 0;
  std::int64_t device = -1;        // GPU index; -1 for host memory
  base::Nanos ts_ns = 0;
  std::string operation;           // "alloc" | "free" | "pool-create" | "pool-destroy" | "pool-trim"
  std::int64_t bytes = 0;          // size of the block (positive for a free too)
  std::int64_t address = -1;
  std::string memory_kind;         // "device" | "pinned" | "pageable" | "managed" | "cpu" | "unknown"
  std::int64_t stream = -1;
  std::int64_t correlation_id = -1;  // the CUDA API call that allocated
  std::int64_t total_allocated = -1;  // the allocator's total after the event, -1 unknown
  std::int64_t total_reserved = -1;
  std::string file;                // the user's line that allocated, "" unknown
  std::int64_t line = -1;
  std::string function;
  bool operator==(const MemoryEvent&) const = default;
};

// A Python object of the user's code that keeps more memory alive step after step: the leak
// evidence the bridge gathers when it sees a holder grow between two sampled steps.
struct MemoryHolder {
  std::int64_t pid = 0;
  base::Nanos ts_ns = 0;
  std::int64_t step = -1;          // the step at which the growth was confirmed
  std::string kind;                // "autograd-graph" | "container"
  std::string name;                // the expression that holds it: "total_loss", "self.history"
  std::string file;                // the user's line that adds to it (the `+=`, the `.append`)
  std::int64_t line = -1;
  std::string function;
  std::int64_t first_step = -1;    // the sampled step the growth was measured from
  std::int64_t size_before = -1;   // autograd nodes or items held at first_step
  std::int64_t size_after = -1;    // the same at `step`
  std::int64_t bytes = -1;         // tensor bytes it holds at `step`, -1 unknown
  std::string stack;               // JSON: the stack of the frame that owns the holder
  bool operator==(const MemoryHolder&) const = default;
};

// Sampled Python stacks (docs/FORMAT.md, *Sampled stacks*): frames and stacks are interned per store, the
// samples aggregated per step, thread and stack, so that a long job's store stays small.
// One frame of a sampled stack: a line of a function of a file.
struct StackFrame {
  std::int64_t id = 0;
  std::string file;
  std::int64_t line = -1;
  std::string function;
  bool operator==(const StackFrame&) const = default;
};

// One stack, as a node of a trie: its innermost frame and the stack of its caller (-1 for an outermost frame).
struct Stack {
  std::int64_t id = 0;
  std::int64_t parent_id = -1;
  std::int64_t frame_id = 0;
  bool operator==(const Stack&) const = default;
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
};

// Something the collector or an importer wants the user to know: skipped input, drops, missing torch.
struct Diagnostic {
  std::string source;    // "collector" | "bridge" | "import" | "cupti" | ...
  std::string severity;  // "error" | "warning" | "info"
  std::string message;
  std::int64_t count = 1;
  bool operator==(const Diagnostic&) const = default;
};

}  // namespace torchscope::store
