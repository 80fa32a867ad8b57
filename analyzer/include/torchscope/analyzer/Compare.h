// Compares a baseline run with a new one: the CI gate. Steady-state step time (median, spread and a
// Mann-Whitney U test over the steps), compile time, and graph breaks, recompiles and syncs by
// location. A regression beyond the threshold or a new problem makes the comparison fail. A side may
// be a run folder of per-rank stores, compared whole: the job's step time is its slowest rank's, its
// compile time the longest rank's, its problems those of every rank; per-rank step times and the
// merged findings (new, gone, changed) come with it.
//
// Error contract: compareStores() fails like analyze() for an unreadable store, with kNotFound for a missing path
// or a folder without stores; never throws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Report.h"

namespace torchscope::analyzer {

struct StepTimeStats {
  std::int64_t steps = 0;
  double median_s = 0;
  double p10_s = 0;
  double p90_s = 0;
};

// A graph break, recompile or repeated sync at one place, present in one run only.
struct ProblemChange {
  std::string kind;  // "graph-break" | "recompile" | "sync"
  std::string file;
  std::int64_t line = -1;
  std::string function;
  std::string detail;  // break type, recompile cause or sync op
  std::int64_t count = 0;
};

// One rank's steady-state step time on both sides (steps 0 on a side where the rank is missing).
struct RankStepChange {
  std::int64_t rank = -1;
  StepTimeStats base_steps;
  StepTimeStats new_steps;
  double change_percent = 0;
};

// A merged finding (rule at a place, matched like problems: not by line) of one run only, or of both with another
// count or other ranks.
struct FindingChange {
  RuleId rule;
  std::string title;  // the new run's, else the baseline's
  std::string file;
  std::int64_t line = -1;
  std::string function;
  std::int64_t base_count = 0;  // 0: not in that run
  std::int64_t new_count = 0;
  std::vector<std::int64_t> base_ranks;  // the ranks that had it, when the run is a folder of ranks
  std::vector<std::int64_t> new_ranks;
  // ranks/divergent-*: a rank compiles differently from the others.
  [[nodiscard]] bool rankDivergence() const {
    return rule == "ranks/divergent-recompile" || rule == "ranks/divergent-graph-break";
  }
};

struct Comparison {
  std::string base_path;
  std::string new_path;
  double threshold_percent = 5;
  StepTimeStats base_steps;
  StepTimeStats new_steps;
  double step_change_percent = 0;  // (new median - base median) / base median
  double p_value = 1;              // two-sided Mann-Whitney U; 1 when either side has < 3 steps
  bool step_regression = false;
  double base_compile_s = 0;
  double new_compile_s = 0;
  bool compile_regression = false;
  std::vector<ProblemChange> new_problems;
  std::vector<ProblemChange> gone_problems;
  std::vector<RankStepChange> ranks;    // by rank, when either side holds two or more ranks
  std::int64_t base_slowest_rank = -1;  // the rank whose steps stand for the job's, -1 for a single process
  std::int64_t new_slowest_rank = -1;
  std::vector<FindingChange> new_findings;
  std::vector<FindingChange> gone_findings;
  std::vector<FindingChange> changed_findings;
  // A ranks/divergent-* finding the baseline did not have: a rank now compiles differently from the others.
  bool divergence_regression = false;
  std::vector<std::string> notes;
  [[nodiscard]] bool failed() const {
    return step_regression || compile_regression || !new_problems.empty() || divergence_regression;
  }
};

struct CompareOptions {
  double threshold_percent = 5;
  double significance = 0.05;  // p-value below which a step-time change counts
};

// `base_path` and `new_path`: a store, or a run folder (every store in it).
[[nodiscard]] Result<Comparison> compareStores(const std::string& base_path, const std::string& new_path,
                                               const CompareOptions& options = {});

[[nodiscard]] std::string renderComparison(const Comparison& comparison, Format format,
                                           const RenderOptions& options = {});

}  // namespace torchscope::analyzer
