// `torchscope fix`: re-runs a job with each candidate fix and measures whether it helps.
//
// The first baseline run (the profile, for `fix -- CMD`) is also the baseline's first sample. The
// candidates are the fixes of the findings, most impact first, less those that cannot act in the
// experiment's conditions. The variants run on private copies of the job, interleaved by rounds
// (baseline, fix 1, fix 2, ...), each run under the collector when its library exists and always
// under torchscope_compiler.launch (which applies the runtime fixes and reports steps and CPU time).
// A fix whose intended effect (fewer recompiles, breaks, syncs, ...) does not show in its first run
// is stopped there; the others are looked at after every round from the second on and stop once
// the interval of their speed-up is decisive or the run limit is reached (Sequential.h). Then, when
// two or more fixes were accepted, their combination runs the same way against the baseline runs
// already made.
// Error contract: Result errors for bad input (not a python job, unknown fix ids, unreadable
// store, unknown verdict measure) and when the baseline itself fails; a failing candidate is a
// rejected fix, not an error.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "torchscope/base/Result.h"
#include "torchscope/compiler/CompileWorth.h"
#include "torchscope/compiler/Effects.h"
#include "torchscope/compiler/FixCatalog.h"
#include "torchscope/compiler/Measurement.h"
#include "torchscope/compiler/Parity.h"
#include "torchscope/compiler/Sequential.h"
#include "torchscope/compiler/Statistics.h"

namespace torchscope::compiler {

struct FixOptions {
  std::vector<std::string> job_argv;   // `fix -- python train.py ...`; empty: the store's command line
  std::string job_working_directory;   // empty: the current directory
  std::string store_path;              // `fix RUN.db`: its findings and command line
  std::string fixes;                   // explicit "id,id:arg"; empty: from the findings
  int repetitions = 5;                 // at most this many runs per variant; the sequential design stops earlier
  int warmup_steps = 1;                // steps at the start of each run left out of the steady state
  int window_steps = 0;                // --steps N: every run ends cleanly after warm-up + N steps; 0: runs whole
  double parity_tolerance = kDefaultParityTolerance;
  std::string parity_pattern = kDefaultParityPattern;
  double min_total_gain = 0.02;        // smaller changes of the verdict measure count as no change
  double min_impact = 0.05;            // findings estimated below this fraction of the run are not measured
  int max_fixes = 0;                   // measure at most this many fixes, most impact first; 0: all that can act
  std::string verdict_metric = "auto";  // a Metric name; auto: end-to-end CPU time, wall time for CUDA jobs
  double alpha = 0.05;                 // error rate of a verdict over all the looks at one fix
  double max_memory_increase = 0.25;   // a faster fix whose peak memory grows more than this is rejected
  bool use_collector = true;
  std::string collector_library;       // libtorchscope_collector.so
  std::string compiler_python_dir;     // compiler/python (torchscope_compiler)
  // Interpreters tried, in order, for fix's own Python tools (the LibCST rewrite) before the job's: torchscope's
  // environment, so that the job's needs no LibCST.
  std::vector<std::string> tool_pythons;
  std::string torchscope_executable;   // for `torchscope advise` when the store has no findings
  bool write = false;                  // apply the accepted source fixes to the user's files
  bool keep_temp = false;
  bool shared_compile_cache = false;   // false: every run compiles from a private Inductor cache (Runner.h)
  int parallel_runs = 1;               // runs at once, each pinned to its share of the CPUs (CPU jobs only)
  bool allow_test_fixes = false;
  std::chrono::seconds run_timeout{3600};
  std::function<void(const std::string&)> progress;  // one line per event, e.g. to stderr
  // When a run starts (`running`) and when it ends, from the thread that runs it: its label (baseline-2,
  // tensor-lr-1, ...) and its store ("" without the collector), for a live view of the runs.
  std::function<void(const std::string& label, const std::string& store, bool running)> on_run;
  // Called once the first baseline run has finished, with its collector store ("" without one).
  std::function<void(const std::string& store)> on_profiled;
};

// One metric (Measurement.h) of one variant over its runs.
struct MetricSummary {
  std::vector<double> runs_s;  // per successful run that knew it
  double median_s = -1;
  SpeedupInterval speedup;     // baseline over this variant, 95 % (not set for the baseline)
};

struct VariantStats {
  double step_time_median_s = 0;
  double total_time_s = 0;     // median wall time of the runs
  double compile_time_s = 0;   // median over the runs
  std::int64_t recompiles = 0; // median over the runs
  std::int64_t graph_breaks = 0;
  std::int64_t syncs = -1;     // -1: unknown (no collector store)
  std::vector<double> wall_s;  // per run
  int runs = 0;
  int failed_runs = 0;
  std::string failure;         // the first failed run's exit code and last stderr lines
  std::map<std::string, MetricSummary> metrics;  // by Metric::name()
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

// Where a fix's time goes and the run length at which it pays off: what it saves (+) or costs (-) in
// compile time once, and per steady-state step, on one clock. A fix that saves compile time but slows
// the steps pays off only below `steps` steps; one that costs compile time but speeds the steps only
// above. Medians over the runs; `step_decided` tells whether the steps' 95 % interval excludes no change.
struct Payoff {
  std::string clock;             // "cpu" | "wall"; empty when compile or steady-step figures are missing
  double compile_saved_s = 0;    // baseline compile time - the fix's
  double step_saved_s = 0;       // baseline steady-state step - the fix's
  SpeedupInterval step_speedup;  // the steady-state step's speed-up on that clock
  std::string when;              // "always" | "never" | "below" | "above" (the run length in steps)
  double steps = -1;             // the break-even run length for "below" / "above"
  [[nodiscard]] bool known() const { return !clock.empty(); }
  // A measurably slower steady state (95 % interval wholly below 1) or an estimate slower by min_gain.
  [[nodiscard]] bool stepsSlower(double min_gain) const;
  // "saves 64 s of compile CPU time, costs 0.9 ms a step: worth it below 70,000 steps"
  [[nodiscard]] std::string text() const;
};

// Compile time and steady-state step of `candidate` against `baseline` on `clock`.
[[nodiscard]] Payoff payoffOf(const VariantStats& baseline, const VariantStats& candidate, Clock clock);

struct FixOutcome {
  std::string id;    // "id" or "id:arg"; "combined" for the accepted fixes together
  std::string kind;  // "runtime" | "source" | "advice" | "combined"
  // "accepted" | "rejected" | "no effect" | "not run" (cannot act, below --min-impact or --max-fixes)
  // | "not applicable" (a rewrite that changes nothing) | "advice"
  std::string status;
  bool measured = false;
  bool accepted = false;
  std::string reason;
  SpeedupInterval speedup;   // steady-state step wall time, 95 %
  double total_speedup = 0;  // end-to-end wall time, estimate
  double compile_time_delta_s = 0;
  SpeedupInterval verdict;   // the verdict measure at the look that stopped the fix
  EffectCheck effect;
  Payoff payoff;
  double break_even_steps = -1;  // the payoff's break-even run length in steps ("below"/"above"); -1 none
  double impact_fraction = -1;   // the findings' estimated share of the run
  std::string finding;           // the finding it answers, e.g. "recompile/dynamic-shape at model.py:41"
  VariantStats stats;
  MemoryChange memory;
  ParityResult parity;
  std::string diff;
  std::vector<std::string> members;  // for the combined outcome: its fix ids
  // torch-compile and eager: each compiled region's eager and compiled time per call (collector runs only).
  std::optional<CompileWorth> compile_worth;
};

struct FixReport {
  std::string command;
  int repetitions = 0;       // the most runs a variant may get
  std::string steps_source;  // "store" | "launcher"
  bool collector_used = false;
  std::string verdict_metric;  // Metric::name() the verdicts rest on
  int window_steps = 0;        // --steps: the runs ended after warm-up + this many steps; 0: they ran whole
  bool window_reached = false;  // the baseline's first run stepped far enough to be ended there
  SequentialRule fix_rule;
  SequentialRule combined_rule;
  int runs = 0;              // runs of the job, the first baseline run included
  int parallel_runs = 1;     // runs at once (FixOptions::parallel_runs)
  VariantStats baseline;
  std::vector<FixOutcome> fixes;
  std::optional<FixOutcome> combined;
  std::vector<std::string> written_files;  // with --write
  std::vector<std::string> notes;
};

[[nodiscard]] Result<FixReport> runFixExperiment(const FixOptions& options);

// Appends one store::FixExperiment row per fix (and the combined one) to an existing store.
[[nodiscard]] Result<void> saveFixExperiments(const FixReport& report, const std::string& store_path);

// The verdict on a measured fix, exposed for tests: rejected when a run failed, parity broke or
// its effect did not show; otherwise judged on `outcome.verdict` after `outcome.stats.runs` runs
// (Sequential.h): accepted when faster, rejected when slower or without a measurable change.
void decide(FixOutcome& outcome, const SequentialRule& rule, const std::string& verdict_title);

// The accepted fixes that go into the combination, as indices into `fixes`: all of them, except that of the accepted
// variants of one fix (FixSpec::arg_picks_variant: quantize-dynamic's schemes, compile-mode's modes), which cannot act
// together, only the one with the best verdict estimate, each choice explained in `notes`.
[[nodiscard]] std::vector<std::size_t> combinationMembers(const std::vector<FixOutcome>& fixes,
                                                          std::vector<std::string>& notes);

// The memory change of a candidate against the baseline: GPU reserved memory when both have it, else
// the host's peak RSS.
[[nodiscard]] MemoryChange memoryChange(const VariantStats& baseline, const VariantStats& candidate);
// Turns an accepted fix whose memory grew more than `max_increase` into a rejection with the reason.
void limitMemory(FixOutcome& outcome, double max_increase);

}  // namespace torchscope::compiler
