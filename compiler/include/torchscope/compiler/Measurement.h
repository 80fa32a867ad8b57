// What one run of the job measured: wall and CPU time, steady-state steps, the first-run cost
// (compile time, time to the first step), recompiles, graph breaks, syncs, the files it executed
// and the values used for the parity check.
//
// Sources, in order of preference: the collector's store (steps, compiles, recompiles with their
// cause, graph breaks, syncs), the launcher's JSON report (torchscope_compiler.launch), which covers
// what the store lacks and measures CPU time, and the harness (wall and CPU time of the whole
// process tree). Error contract: Result errors for unreadable files; never throws.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "torchscope/base/Result.h"
#include "torchscope/compiler/Parity.h"

namespace torchscope::compiler {

struct StepSample {
  double start_s = 0;
  double end_s = 0;
  bool overlaps_compile = false;
  double cpu_s = -1;  // CPU time of the job's process during the step; -1 unknown
};

struct RunMeasurement {
  double wall_s = 0;              // the whole process, timed by the harness
  double cpu_s = -1;              // user + system time of the whole process tree, from the harness
  std::vector<StepSample> steps;  // in order (the store's when it has steps, else the launcher's)
  std::vector<StepSample> launcher_steps;  // the launcher's, with CPU time per step
  double compile_time_s = 0;
  double compile_cpu_s = -1;      // CPU time of the process tree during compiles (launcher)
  double first_step_wall_s = -1;  // process start to the end of the first step
  double first_step_cpu_s = -1;
  std::int64_t compiles = 0;
  std::int64_t recompiles = 0;
  std::map<std::string, std::int64_t> recompiles_by_cause;  // the store's causes, e.g. "dynamic-shape"
  std::int64_t graph_breaks = 0;
  std::int64_t syncs = -1;        // -1: not known (no collector store)
  bool cuda_used = false;
  bool executed_files_known = false;
  std::vector<std::string> executed_files;  // absolute paths of the job's own files that ran
  int exit_code = 0;
  int ranks = 0;                  // a distributed run: how many ranks reported (0: not distributed)
  int slowest_rank = -1;          // the rank whose steps, compiles and first step are the run's
  int stopped_after_steps = 0;    // the launcher ended the job after this many steps (--steps); 0: it ran whole
  std::string error_tail;         // the last lines of stderr of a run that failed
  std::string stderr_path;        // the run's whole stderr (removed with the run folders unless kept)
  std::string store_path;         // the run's collector store; empty without the collector
  std::vector<double> parity_values;
  // An inference job's requests (the launcher's: calls of the outermost module with parameters), their batch sizes
  // and the outputs of the first ones (Parity.h).
  std::vector<StepSample> requests;
  std::vector<std::int64_t> request_items;
  std::vector<RequestOutput> outputs;
  std::map<std::string, std::string> not_applicable;  // runtime fixes that could not act on the job: their reason
  std::string steps_source;       // "store" | "launcher"
  std::int64_t peak_rss_bytes = -1;            // ProcessResult::peak_rss_bytes
  std::int64_t gpu_peak_allocated_bytes = -1;  // highest cuda.peak_allocated of the store, -1 without a GPU
  std::int64_t gpu_peak_reserved_bytes = -1;   // highest cuda.peak_reserved
};

// Durations of the steady-state steps: those that overlap no compile, after the first
// `warmup_steps` of the run. Falls back to all steps after warm-up when every step compiled.
[[nodiscard]] std::vector<double> steadyStateStepTimes(const RunMeasurement& run, int warmup_steps);
// The same steps of the launcher, as CPU time of the job's process.
[[nodiscard]] std::vector<double> steadyStateStepCpu(const RunMeasurement& run, int warmup_steps);

// The quantities a variant is compared on, each per run as wall time and as CPU time.
// The request measures are an inference job's (wall time only): the p50 and p99 latency of its steady-state
// requests, and their mean, whose inverse is the throughput.
enum class Measure { kEndToEnd, kFirstStep, kCompile, kSteadyStep, kRequestP50, kRequestP99, kRequestMean };
enum class Clock { kWall, kCpu };
struct Metric {
  Measure measure = Measure::kEndToEnd;
  Clock clock = Clock::kCpu;
  [[nodiscard]] std::string name() const;   // e.g. "end_to_end_cpu"
  [[nodiscard]] std::string title() const;  // e.g. "end-to-end CPU time", "first-step wall time"
  bool operator==(const Metric&) const = default;
};
[[nodiscard]] const std::vector<Metric>& allMetrics();
[[nodiscard]] Result<Metric> parseMetric(std::string_view name);  // a name(), Error otherwise

// One run's value of a metric in seconds (steady step: the median of its steady-state steps); -1 unknown.
[[nodiscard]] double metricValue(const RunMeasurement& run, const Metric& metric, int warmup_steps);

// Whether the run is an inference job's: requests, and no training steps (no optimizer step, no backward()).
[[nodiscard]] bool isInference(const RunMeasurement& run);
// Latencies of the steady-state requests: after the first `warmup_steps`, none that overlaps a compile.
[[nodiscard]] std::vector<double> steadyRequestTimes(const RunMeasurement& run, int warmup_steps);

// Recompiles of one cause ("dynamic-shape", "python-scalar"); all recompiles when the store gave no causes.
[[nodiscard]] std::int64_t recompilesOf(const RunMeasurement& run, const std::string& cause);

// Fills steps, compile time, CPU times, counters and executed files from a launcher report file.
[[nodiscard]] Result<void> readLauncherReport(const std::string& path, RunMeasurement& run);

// Overrides what the collector's store knows better: steps (when it has any), compiles,
// recompiles and their causes, graph breaks (when it recorded compiles), syncs and the GPU
// allocator's peaks.
[[nodiscard]] Result<void> readStore(const std::string& path, RunMeasurement& run);

}  // namespace torchscope::compiler
