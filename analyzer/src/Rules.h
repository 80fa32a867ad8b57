// What every rule sees: the store and the facts computed once per store, plus helpers that build
// findings the same way everywhere. One file per rule family under rules/.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "Activity.h"
#include "OpCensus.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/store/UserCode.h"

namespace torchscope::analyzer {

// Time and count of one kernel or CPU op name (kernels: per device).
struct NameStat {
  std::string name;
  std::int64_t device = -1;
  std::int64_t count = 0;
  double seconds = 0;
};

struct Facts {
  store::RunInfo run;
  bool partial = false;
  base::Nanos begin_ns = 0;  // run span
  base::Nanos end_ns = 0;
  double duration_s = 0;
  // Seconds the capture window was open (docs/collector.md): steps, syncs, kernels and memory come from it; the
  // whole run (duration_s) without a window. Compilations always cover the whole run.
  double window_s = 0;
  std::map<std::string, std::int64_t> counts;  // rows per table
  std::vector<store::Step> steps;
  std::vector<std::size_t> steady_steps;  // positions in `steps` of the steady-state ones (base/SteadyState.h)
  base::Nanos steady_begin_ns = 0;        // window of the steady-state steps (the whole run when there are none)
  base::Nanos steady_end_ns = 0;
  std::vector<double> steady_step_seconds;
  double steady_step_median_s = 0;
  double steady_step_total_s = 0;  // the sum of steady_step_seconds
  bool compiled = false;   // torch.compile ran at least once
  double compile_seconds = 0;  // compileWallSeconds(compiles)
  std::vector<store::Compile> compiles;      // small tables, loaded whole
  std::vector<store::Recompile> recompiles;
  bool training = false;   // backward ops or optimizer steps were seen
  std::map<std::int64_t, std::int64_t> compute_major;  // device -> compute capability major
  std::vector<NameStat> kernel_names;  // per (name, device)
  std::vector<NameStat> cpu_op_names;  // per name
  LaunchCost launch;           // mean cudaLaunchKernel call (sampled)
  KernelWindow kernel_window;  // GPU activity in the steady-state window
  std::int64_t aten_ops = 0;
  std::int64_t small_aten_ops = 0;  // shorter than kSmallOpNanos: dominated by dispatch overhead
  std::optional<OpCensus> census;   // the bridge's op census of one eager step (its steps are not steady state)
  std::vector<CollectiveSpan> collectives;  // host-timed ones in start order, then NCCL kernels in start order
  std::vector<AttentionOp> attention_ops;   // by pid, tid and start (ties in storage order)
  static constexpr std::int64_t kSmallOpNanos = 50'000;

  [[nodiscard]] std::int64_t count(const std::string& table) const;
  [[nodiscard]] std::int64_t stepCount() const { return static_cast<std::int64_t>(steps.size()); }
  // steps.step of the steady-state steps.
  [[nodiscard]] std::set<std::int64_t> steadyStepIndices() const;
  // Share of the run's duration, in [0, 1].
  [[nodiscard]] double fraction(double seconds) const;
  // Share of the time the capture window was open, in [0, 1]: for figures measured inside it (syncs, copies,
  // kernels), which a windowed store would otherwise scale down to the whole run.
  [[nodiscard]] double windowFraction(double seconds) const;
};

[[nodiscard]] Result<Facts> collectFacts(const store::Reader& reader);
// The index of the first steady-state step (after compilation and warm-up); 0 without steps.
[[nodiscard]] std::int64_t firstSteadyStep(const Facts& facts);

// Wall time each process (pid) spent compiling: the union of its compilations' intervals, so that overlapping
// records (nested compilations, records sharing a start) count once.
std::map<std::int64_t, double> compileSecondsPerProcess(const std::vector<store::Compile>& compiles);
// Compilations that record their graph count and all of them with none: torch.compile ran, nothing was compiled.
bool compiledNoGraph(const std::vector<store::Compile>& compiles);
// Compile time of the compilations with this compile id, in seconds.
double compileSeconds(const Facts& facts, std::int64_t pid, std::int64_t frame_id, std::int64_t frame_compile_id);
// Distinct input shapes the run showed: 1 + the distinct sizes named by shape guard failures
// ("expected 3, actual 4"); 1 for a run that never recompiled for a shape.
std::int64_t distinctShapes(const Facts& facts);

struct Context {
  const store::Reader& reader;
  const Facts& facts;
  const store::CodeRoots& code;  // which files are the user's: the run's roots and AnalyzeOptions::user_code
};

using RuleFunction = Result<void> (*)(const Context&, std::vector<Finding>&);

struct RuleFamily {
  std::string_view family;
  RuleFunction run;  // reports the ids RuleTable.h gives this family as `reported_by`
};

// Rule families, one per file under rules/.
Result<void> recompileRules(const Context& context, std::vector<Finding>& out);
Result<void> graphBreakRules(const Context& context, std::vector<Finding>& out);
Result<void> syncRules(const Context& context, std::vector<Finding>& out);
Result<void> memcpyRules(const Context& context, std::vector<Finding>& out);
Result<void> gpuRules(const Context& context, std::vector<Finding>& out);
Result<void> precisionRules(const Context& context, std::vector<Finding>& out);
Result<void> compileRules(const Context& context, std::vector<Finding>& out);
Result<void> inferenceRules(const Context& context, std::vector<Finding>& out);
Result<void> memoryRules(const Context& context, std::vector<Finding>& out);

const std::vector<RuleFamily>& ruleFamilies();

// compile/does-not-pay over a region table measured against an eager run (rules/CompilePays.cpp); nullopt when
// compilation paid off or nothing was measured.
struct RegionTable;
std::optional<Finding> compilePaysFinding(const RegionTable& table, double run_duration_s);

// Graph breaks or recompiles of one kind at one user line, counted from the store's rows whatever they cost: what
// the multi-rank divergence compares (findings appear only above an impact threshold, which load can move).
struct Occurrence {
  RuleId rule;       // the rule of their finding: recompile/dynamic-shape, graph-break/item, ...
  std::string file;  // the user's line, as their finding names it
  std::int64_t line = -1;
  std::string function;
  std::string registry_id;  // graph breaks: torch's registry id (gb_id), else the break type; "" for recompiles
  std::string detail;       // in words: the break type, or the recompile's cause and what its guard checked
  std::int64_t count = 0;
  double compile_s = 0;  // the compile time they cost
};
[[nodiscard]] Result<std::vector<Occurrence>> graphBreakOccurrences(const Context& context);
[[nodiscard]] std::vector<Occurrence> recompileOccurrences(const Context& context);

// Helpers shared by the rules.
struct FixProposal {
  std::string_view id;  // from FixIds.h, or "" when no automatic fix exists
  std::string summary;
};

Finding makeFinding(RuleId rule, Severity severity, std::string title, std::string message, const FixProposal& fix);
void setImpact(Finding& finding, const Facts& facts, double seconds);
void setEvidence(Finding& finding, nlohmann::json evidence);

// "1.23 s", "45.6 ms", "789 us"
std::string formatSeconds(double seconds);
std::string formatPercent(double fraction);
// A location for messages: "train.py:42" or "train.py" or "".
std::string formatLocation(const std::string& file, std::int64_t line);

inline double toSeconds(double nanos) { return nanos / 1e9; }
// Length of the union of [begin, end] intervals in nanoseconds, in seconds (Ranks.cpp).
double unionSeconds(std::vector<std::pair<base::Nanos, base::Nanos>> intervals);

// Runs `sql` and returns one column of text values.
Result<std::vector<std::string>> queryTexts(const store::Reader& reader, std::string_view sql,
                                            const std::vector<store::QueryParam>& params = {});

bool containsAny(std::string_view text, std::initializer_list<std::string_view> needles);
std::string lowercase(std::string_view text);

}  // namespace torchscope::analyzer
