#include "torchscope/testing/ExtremeStore.h"

#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "torchscope/store/UserCode.h"
#include "torchscope/store/Writer.h"

namespace torchscope::testing {

namespace {

namespace st = torchscope::store;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

// (start, end) of the rows of every timed table: both edges, end before start, empty spans at the
// edges, and spans that overflow only when subtracted or summed.
constexpr std::array<std::pair<torchscope::base::Nanos, torchscope::base::Nanos>, 9> kSpans{{
    {kMin, kMax},
    {kMax, kMin},
    {kMin, kMin},
    {kMax, kMax},
    {-1, kMax},
    {kMin, 0},
    {0, 1'000},
    {kMax - 1, kMax},
    {kMax / 2, kMax},
}};

// Values of the integer columns that are not times: counts, bytes, steps, ids.
constexpr std::array<std::int64_t, 6> kValues{kMax, kMin, -1, 0, kMax - 1, kMin + 1};

std::int64_t valueAt(std::size_t i) { return kValues[i % kValues.size()]; }

void addProcesses(st::Writer& writer) {
  // Rank 0 of a world of INT64_MAX ranks, and a rank far outside the world of 2 it declares.
  writer.add(st::Process{1, -1, std::string("python ") + kNotUtf8, "train.py", 0, 0, kMax, kMin, kMax});
  writer.add(st::Process{kMax, kMin, "worker", "train.py", kMax, kMax, 2, kMax, kMin});
  writer.add(st::Process{kMin, kMax, "", "", 3, -1, kMin, 0, -1});
  writer.add(st::Thread{1, 1, "MainThread"});
  writer.add(st::Thread{kMax, kMin, kNotUtf8});
  writer.add(st::Device{0, "GPU 0", 8, 0, kMax, kMax, "{}"});
  writer.add(st::Device{kMax, kNotUtf8, kMin, kMax, kMin, kMin, "{\"x\": 1}"});
}

// The edge spans in every timed table, each row with its own edge values in the other columns.
void addEdgeRows(st::Writer& writer) {
  for (std::size_t i = 0; i < kSpans.size(); ++i) {
    const auto [start, end] = kSpans[i];
    const std::int64_t value = valueAt(i);
    const std::int64_t device = i % 2 == 0 ? 0 : kMax;
    const auto correlation = static_cast<std::int64_t>(i);
    writer.add(st::ApiCall{1, 1, start, end, "cudaLaunchKernel", "runtime", 211, correlation, 0});
    st::Kernel kernel;
    kernel.pid = 1;
    kernel.device = device;
    kernel.stream = value;
    kernel.start_ns = start;
    kernel.end_ns = end;
    kernel.name = i % 3 == 0 ? "ncclKernel_AllReduce_RING_LL_Sum_float" : "ampere_sgemm_128x64_nn";
    kernel.correlation_id = correlation;
    kernel.grid_x = value;
    kernel.block_x = value;
    kernel.registers_per_thread = value;
    kernel.static_shared_bytes = value;
    writer.add(kernel);
    st::Memcpy copy;
    copy.pid = 1;
    copy.device = device;
    copy.start_ns = start;
    copy.end_ns = end;
    copy.copy_kind = i % 2 == 0 ? "HtoD" : "DtoH";
    copy.bytes = kMax;
    copy.src_kind = "pageable";
    copy.dst_kind = "device";
    copy.pageable = true;
    copy.correlation_id = value;
    writer.add(copy);
    writer.add(st::Memset{1, device, value, start, end, kMax, value, "device", value});
    st::Sync sync;
    sync.pid = 1;
    sync.tid = 1;
    sync.start_ns = start;
    sync.end_ns = end;
    sync.sync_kind = "stream";
    sync.origin = "cupti";
    sync.op = "aten::item";
    sync.file = "train.py";
    sync.line = 12;
    sync.function = "step";
    sync.stack = R"([{"file": "train.py", "line": 12, "function": "step"}])";
    writer.add(sync);
    writer.add(st::NvtxEvent{1, 1, start, end, kNotUtf8, "domain", i % 2 == 0 ? "range" : "mark"});
    for (const char* name : {"aten::matmul", "aten::softmax", "aten::matmul", "aten::add"}) {
      writer.add(st::CpuOp{1, 1, start, end, name, "cpu_op", value, "{}"});
    }
    st::Collective collective;
    collective.pid = collective.tid = 1;
    collective.start_ns = start;
    collective.end_ns = end;
    collective.name = "allreduce";
    collective.source = i % 2 == 0 ? "ddp" : "";
    collective.async = i % 2 == 0;
    writer.add(collective);
    st::Compile compile;
    compile.pid = 1;
    compile.frame_id = value;
    compile.frame_compile_id = value;
    compile.co_name = "forward";
    compile.co_filename = "train.py";
    compile.co_firstlineno = value;
    compile.start_ns = start;
    compile.end_ns = end;
    compile.dynamo_ns = kMax;
    compile.aot_ns = kMin;
    compile.inductor_ns = value;
    compile.graph_count = value;
    compile.cache_size = value;
    compile.cache_hit = i % 2 == 0 ? 0 : 1;
    compile.status = "ok";
    compile.restart_reasons = "[]";
    writer.add(compile);
    st::GraphBreak graph_break;
    graph_break.pid = 1;
    graph_break.frame_id = value;
    graph_break.ts_ns = start;
    graph_break.break_type = "Data-dependent branching";
    graph_break.reason = "generic_jump TensorVariable()";
    graph_break.hints = "[]";
    graph_break.file = "train.py";
    graph_break.line = value;
    graph_break.user_stack = "[]";
    graph_break.stack = "[]";
    writer.add(graph_break);
    st::Recompile recompile;
    recompile.pid = 1;
    recompile.frame_id = value;
    recompile.ts_ns = end;
    recompile.co_name = "forward";
    recompile.co_filename = "train.py";
    recompile.co_firstlineno = value;
    recompile.guard_failures = R"(["tensor 'x' size mismatch at index 0. expected 3, actual 9223372036854775807"])";
    recompile.cause = "dynamic-shape";
    recompile.cache_size = value;
    recompile.stack = "[]";
    writer.add(recompile);
    writer.add(st::Step{1, 1, i % 2 == 0 ? value : static_cast<std::int64_t>(i), start, end, "optimizer"});
    st::MemoryEvent event;
    event.pid = 1;
    event.device = device;
    event.ts_ns = start;
    event.operation = i % 2 == 0 ? "free" : "alloc";
    event.bytes = i % 2 == 0 ? kMin : kMax;
    event.total_allocated = value;
    event.total_reserved = kMax;
    writer.add(event);
  }
}

// Enough short kernels after their launches for gpu/launch-bound, close to INT64_MAX.
void addLaunches(st::Writer& writer) {
  constexpr std::int64_t kLaunches = 150;
  constexpr torchscope::base::Nanos kFirst = kMax - 10'000'000;
  for (std::int64_t i = 0; i < kLaunches; ++i) {
    const torchscope::base::Nanos launch = kFirst + i * 50'000;
    const std::int64_t correlation = 1'000 + i;
    writer.add(st::ApiCall{1, 1, launch, launch + 5'000, "cudaLaunchKernel", "runtime", 211, correlation, 0});
    st::Kernel kernel;
    kernel.pid = 1;
    kernel.device = 0;
    kernel.stream = 7;
    kernel.start_ns = launch + 20'000;
    kernel.end_ns = launch + 20'001;
    kernel.name = "vectorized_elementwise_kernel";
    kernel.correlation_id = correlation;
    writer.add(kernel);
  }
}

void addMemory(st::Writer& writer) {
  for (const char* series : {"host.rss", "host.hwm", "cuda.allocated", "cuda.reserved", "cuda.peak_allocated",
                             "cuda.peak_reserved", "cuda.device_allocs_count", "cuda.device_frees_count",
                             "cuda.alloc_retries_count", "cuda.ooms_count", "cpu.allocated"}) {
    const bool host = std::string(series).rfind("host.", 0) == 0 || std::string(series).rfind("cpu.", 0) == 0;
    for (std::size_t i = 0; i < kSpans.size(); ++i) {
      const std::int64_t step = i % 3 == 0 ? valueAt(i) : static_cast<std::int64_t>(i);
      writer.add(st::MemorySample{1, host ? -1 : 0, series, kSpans[i].first, step, valueAt(i + 1)});
      writer.add(st::MemorySample{kMax, host ? -1 : kMax, series, kSpans[i].second, -1, valueAt(i)});
    }
  }
  st::MemoryHolder holder;
  holder.pid = 1;
  holder.ts_ns = kMax;
  holder.step = kMax;
  holder.kind = "container";
  holder.name = "self.history";
  holder.file = "train.py";
  holder.line = kMax;
  holder.first_step = kMin;
  holder.size_before = kMin;
  holder.size_after = kMax;
  holder.bytes = kMax;
  holder.stack = "[]";
  writer.add(holder);
  holder.kind = "autograd-graph";
  holder.name = "total_loss";
  holder.step = kMin;
  holder.first_step = kMax;
  holder.size_before = kMax;
  holder.size_after = kMin;
  writer.add(holder);
}

void addFindingsAndDiagnostics(st::Writer& writer) {
  st::Finding finding;
  finding.rule = "gpu/idle";
  finding.severity = "warning";
  finding.title = std::string("GPU idle ") + kNotUtf8;
  finding.message = kNotUtf8;
  finding.file = "train.py";
  finding.line = kMax;
  finding.count = kMax;
  finding.impact_seconds = 1e300;
  finding.impact_fraction = 1e300;
  finding.evidence = R"({"start_ns": 9223372036854775807, "end_ns": -9223372036854775808})";
  writer.add(finding);
  finding.impact_seconds = -1e300;
  finding.line = kMin;
  writer.add(finding);
  st::FixExperiment experiment;
  experiment.fix_id = "torch-compile";
  experiment.kind = "runtime";
  experiment.repetitions = kMax;
  experiment.baseline_step_median_s = 1e300;
  experiment.candidate_step_median_s = -1e300;
  experiment.speedup_median = 1e300;
  experiment.recompiles_after = kMin;
  experiment.details = "{}";
  writer.add(experiment);
  writer.add(st::Diagnostic{"collector", "warning", std::string("dropped ") + kNotUtf8, kMax});
  writer.add(st::Diagnostic{"import", "info", "skipped", kMin});
  writer.add(st::RunAttribute{std::string(st::kUserRootsAttribute), R"(["/work"])"});
  writer.add(st::RunAttribute{"note", kNotUtf8});
}

// What the writer never writes: an interned string at id INT64_MAX (readers that size a table by the ids must not).
std::string moveAStringToTheLastId(const std::string& store_path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(store_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
  if (rc == SQLITE_OK) {
    rc = sqlite3_exec(db,
                      "UPDATE kernels SET name_id = 9223372036854775807 WHERE name_id = "
                      "(SELECT id FROM strings WHERE value = 'vectorized_elementwise_kernel');"
                      "UPDATE strings SET id = 9223372036854775807 WHERE value = 'vectorized_elementwise_kernel';",
                      nullptr, nullptr, nullptr);
  }
  const std::string message = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
  sqlite3_close(db);
  return rc == SQLITE_OK ? "" : store_path + ": " + message;
}

}  // namespace

std::string writeExtremeValuesStore(const std::string& store_path) {
  auto writer = st::Writer::open(store_path);
  if (!writer) return writer.error().message;
  st::RunInfo run;
  run.command_line = std::string("train.py --name ") + kNotUtf8;
  run.host = kNotUtf8;
  run.torch_version = "2.13.0";
  run.gpu_name = kNotUtf8;
  run.start_ns = kMin + 1;
  run.start_wall_ns = kMax;
  run.end_ns = kMax;
  run.exit_code = kMin;
  run.source = "collector";
  (*writer)->setRun(run);
  addProcesses(**writer);
  addEdgeRows(**writer);
  addLaunches(**writer);
  addMemory(**writer);
  addFindingsAndDiagnostics(**writer);
  auto closed = (*writer)->close(run.end_ns);
  if (!closed) return closed.error().message;
  return moveAStringToTheLastId(store_path);
}

}  // namespace torchscope::testing
