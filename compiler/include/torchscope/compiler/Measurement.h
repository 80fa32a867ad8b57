// What one run of the job measured: wall time, steady-state steps, compile time, recompiles,
// graph breaks, syncs and the values used for the parity check.
//
// Sources, in order of preference: the collector's store (steps, compiles, recompiles, graph
// breaks, syncs) and the launcher's JSON report (torchscope_compiler.launch), which covers what
// the store lacks. Error contract: Result errors for unreadable files; never throws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torchscope/store/Result.h"

namespace torchscope::compiler {

struct StepSample {
  double start_s = 0;
  double end_s = 0;
  bool overlaps_compile = false;
};

struct RunMeasurement {
  double wall_s = 0;              // the whole process, timed by the harness
  std::vector<StepSample> steps;  // in order
  double compile_time_s = 0;
  std::int64_t compiles = 0;
  std::int64_t recompiles = 0;
  std::int64_t graph_breaks = 0;
  std::int64_t syncs = -1;        // -1: not known (no collector store)
  int exit_code = 0;
  std::vector<double> parity_values;
  std::string steps_source;       // "store" | "launcher"
  std::int64_t peak_rss_bytes = -1;            // ProcessResult::peak_rss_bytes
  std::int64_t gpu_peak_allocated_bytes = -1;  // highest cuda.peak_allocated of the store, -1 without a GPU
  std::int64_t gpu_peak_reserved_bytes = -1;   // highest cuda.peak_reserved
};

// Durations of the steady-state steps: those that overlap no compile, after the first
// `warmup_steps` of the run. Falls back to all steps after warm-up when every step compiled.
[[nodiscard]] std::vector<double> steadyStateStepTimes(const RunMeasurement& run, int warmup_steps);

// Fills steps, compile time and counters from a launcher report file.
[[nodiscard]] Result<void> readLauncherReport(const std::string& path, RunMeasurement& run);

// Overrides what the collector's store knows better: steps (when it has any), compiles,
// recompiles, graph breaks (when it recorded compiles), syncs and the GPU allocator's peaks.
[[nodiscard]] Result<void> readStore(const std::string& path, RunMeasurement& run);

}  // namespace torchscope::compiler
