// Records of the store (Records.h): What the analyzer and `torchscope fix` conclude: findings and fix experiments.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "torchscope/store/Table.h"

namespace torchscope::store {

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

  static constexpr schema::Table kTable{.name = "findings"};
  static constexpr auto columns() {
    using R = Finding;
    using namespace schema;
    return std::tuple{column("rule", &R::rule),
                      column("severity", &R::severity),
                      column("title", &R::title),
                      column("message", &R::message),
                      column("file", &R::file),
                      column("line", &R::line),
                      column("function", &R::function),
                      column("count", &R::count),
                      column("impact_seconds", &R::impact_seconds),
                      column("impact_fraction", &R::impact_fraction),
                      column("evidence", &R::evidence),
                      column("fix_id", &R::fix_id),
                      column("fix_summary", &R::fix_summary),
                      column("fix_kind", &R::fix_kind)};
  }
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

  static constexpr schema::Table kTable{.name = "fix_experiments"};
  static constexpr auto columns() {
    using R = FixExperiment;
    using namespace schema;
    return std::tuple{column("fix_id", &R::fix_id),
                      column("kind", &R::kind),
                      column("accepted", &R::accepted),
                      column("reason", &R::reason),
                      column("repetitions", &R::repetitions),
                      column("baseline_step_median_s", &R::baseline_step_median_s),
                      column("candidate_step_median_s", &R::candidate_step_median_s),
                      column("speedup_median", &R::speedup_median),
                      column("speedup_ci_low", &R::speedup_ci_low),
                      column("speedup_ci_high", &R::speedup_ci_high),
                      column("total_speedup", &R::total_speedup),
                      column("compile_time_delta_s", &R::compile_time_delta_s),
                      column("recompiles_after", &R::recompiles_after),
                      column("graph_breaks_after", &R::graph_breaks_after),
                      column("syncs_after", &R::syncs_after),
                      column("parity_ok", &R::parity_ok),
                      column("max_rel_diff", &R::max_rel_diff),
                      column("diff", &R::diff),
                      column("details", &R::details)};
  }
};

}  // namespace torchscope::store
