// Compares a baseline run with a new one: the CI gate. Steady-state step time (median, spread and a
// Mann-Whitney U test over the steps), compile time, and graph breaks, recompiles and syncs by
// location. A regression beyond the threshold or a new problem makes the comparison fail.
//
// Error contract: compareStores() fails like analyze() for an unreadable store; never throws.
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
  std::vector<std::string> notes;
  [[nodiscard]] bool failed() const { return step_regression || compile_regression || !new_problems.empty(); }
};

struct CompareOptions {
  double threshold_percent = 5;
  double significance = 0.05;  // p-value below which a step-time change counts
};

[[nodiscard]] Result<Comparison> compareStores(const std::string& base_path, const std::string& new_path,
                                               const CompareOptions& options = {});

[[nodiscard]] std::string renderComparison(const Comparison& comparison, Format format,
                                           const RenderOptions& options = {});

}  // namespace torchscope::analyzer
