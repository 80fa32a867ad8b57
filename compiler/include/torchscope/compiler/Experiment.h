// `torchscope fix`: re-runs a job with each candidate fix and measures whether it helps.
//
// Runs the baseline and each candidate on private copies of the job, interleaved (baseline, fix 1,
// fix 2, ..., baseline, fix 1, ...) for `repetitions` rounds, each run under the collector when
// its library exists and always under torchscope_compiler.launch (which applies the runtime fixes
// and reports steps). A fix is accepted when its runs succeed, parity holds and it is measurably
// faster; then the accepted fixes are measured together the same way.
// Error contract: Result errors for bad input (not a python job, unknown fix ids, unreadable
// store) and when the baseline itself fails; a failing candidate is a rejected fix, not an error.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "torchscope/compiler/FixCatalog.h"
#include "torchscope/compiler/Parity.h"
#include "torchscope/compiler/Statistics.h"
#include "torchscope/store/Result.h"

namespace torchscope::compiler {

struct FixOptions {
  std::vector<std::string> job_argv;   // `fix -- python train.py ...`; empty: the store's command line
  std::string job_working_directory;   // empty: the current directory
  std::string store_path;              // `fix RUN.db`: its findings and command line
  std::string fixes;                   // explicit "id,id:arg"; empty: from the findings
  int repetitions = 3;
  int warmup_steps = 1;                // steps at the start of each run left out of the steady state
  double parity_tolerance = kDefaultParityTolerance;
  std::string parity_pattern = kDefaultParityPattern;
  double min_total_gain = 0.02;        // a fix without a steady-state gain must save this much wall time
  double max_memory_increase = 0.25;   // a faster fix whose peak memory grows more than this is rejected
  bool use_collector = true;
  std::string collector_library;       // libtorchscope_collector.so
  std::string compiler_python_dir;     // compiler/python (torchscope_compiler)
  std::string torchscope_executable;   // for `torchscope advise` when the store has no findings
  bool write = false;                  // apply the accepted source fixes to the user's files
  bool keep_temp = false;
  bool shared_compile_cache = false;   // false: every run compiles from an empty Inductor cache of its own
  bool allow_test_fixes = false;
  std::chrono::seconds run_timeout{3600};
  std::function<void(const std::string&)> progress;  // one line per event, e.g. to stderr
};

struct VariantStats {
  double step_time_median_s = 0;
  double total_time_s = 0;     // median wall time of the runs
  double compile_time_s = 0;   // median over the runs
  std::int64_t recompiles = 0; // median over the runs
  std::int64_t graph_breaks = 0;
  std::int64_t syncs = -1;     // -1: unknown (no collector store)
  std::vector<double> wall_s;  // per repetition
  int failed_runs = 0;
  // Medians over the runs, -1 unknown: peak host RSS of the job's process tree (its largest process)
  // and, on a GPU, the caching allocator's peaks summed over the devices.
  std::int64_t peak_rss_bytes = -1;
  std::int64_t gpu_peak_allocated_bytes = -1;
  std::int64_t gpu_peak_reserved_bytes = -1;
};

// What a fix costs (positive) or saves (negative) in memory against the baseline.
struct MemoryChange {
  std::string basis;              // "gpu_reserved" (on a GPU) or "host_rss"; "" when unknown
  std::int64_t baseline_bytes = -1;
  std::int64_t candidate_bytes = -1;
  double increase = 0;            // (candidate - baseline) / baseline
  [[nodiscard]] bool known() const { return !basis.empty(); }
};

struct FixOutcome {
  std::string id;    // "id" or "id:arg"; "combined" for the accepted fixes together
  std::string kind;  // "runtime" | "source" | "advice" | "combined"
  bool measured = false;
  bool accepted = false;
  std::string reason;
  SpeedupInterval speedup;
  double total_speedup = 0;
  double compile_time_delta_s = 0;
  VariantStats stats;
  MemoryChange memory;
  ParityResult parity;
  std::string diff;
  std::vector<std::string> members;  // for the combined outcome: its fix ids
};

struct FixReport {
  std::string command;
  int repetitions = 0;
  std::string steps_source;  // "store" | "launcher"
  bool collector_used = false;
  VariantStats baseline;
  std::vector<FixOutcome> fixes;
  std::optional<FixOutcome> combined;
  std::vector<std::string> written_files;  // with --write
  std::vector<std::string> notes;
};

[[nodiscard]] Result<FixReport> runFixExperiment(const FixOptions& options);

// Appends one store::FixExperiment row per fix (and the combined one) to an existing store.
[[nodiscard]] Result<void> saveFixExperiments(const FixReport& report, const std::string& store_path);

// The acceptance rule, exposed for tests: parity must hold and the runs succeed; the fix must not be
// slower (CI of the step speed-up wholly below 1, or total speed-up below 1 - min_gain) and must
// show a gain (CI wholly above 1, or total speed-up at least 1 + min_gain).
void decide(FixOutcome& outcome, double min_total_gain);

// The memory change of a candidate against the baseline: GPU reserved memory when both have it, else
// the host's peak RSS.
[[nodiscard]] MemoryChange memoryChange(const VariantStats& baseline, const VariantStats& candidate);
// Turns an accepted fix whose memory grew more than `max_increase` into a rejection with the reason.
void limitMemory(FixOutcome& outcome, double max_increase);

}  // namespace torchscope::compiler
