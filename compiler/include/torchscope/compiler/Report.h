// Renders a FixReport as text, Markdown, JSON or HTML.
//
// The JSON keeps the contract other tools rely on:
//   {"baseline": {"step_time_median_s", "total_time_s", "compile_time_s", "recompiles", "graph_breaks", "syncs"},
//    "fixes": [{"id", "kind", "accepted", "reason", "speedup": {"median", "ci_low", "ci_high"}, "total_speedup",
//               "recompiles_after", "graph_breaks_after", "syncs_after", "parity": {"ok", "max_rel_diff"}, "diff"}],
//    "combined": {same fields as a fix} | null}
// plus extra fields (command, repetitions, status, the verdict and its metric, every metric's medians
// and intervals, the effect check, ...; docs/compiler.md lists them). Unknown numbers are null.
// Error contract: pure functions; HTML escapes every string.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "torchscope/compiler/Experiment.h"

namespace torchscope::compiler {

[[nodiscard]] nlohmann::json reportJson(const FixReport& report);
// {"end_to_end_cpu": {"median_s", "runs_s", "speedup": {"median", "ci_low", "ci_high"} | absent}, ...}
[[nodiscard]] nlohmann::json metricsJson(const VariantStats& stats);
[[nodiscard]] std::string renderText(const FixReport& report);
[[nodiscard]] std::string renderMarkdown(const FixReport& report);
[[nodiscard]] std::string renderHtml(const FixReport& report);

}  // namespace torchscope::compiler
