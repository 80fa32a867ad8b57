// The ranks section of the reports: the per-rank table, stragglers, divergence, a partial run.
#include <fmt/format.h>

#include "Reports.h"

namespace torchscope::analyzer::report {

nlohmann::json ranksJson(const RankAnalysis& ranks) {
  nlohmann::json table = nlohmann::json::array();
  for (const auto& rank : ranks.ranks) {
    table.push_back({{"rank", rank.rank},
                     {"path", sanitizeUtf8(rank.path)},
                     {"host", sanitizeUtf8(rank.host)},
                     {"partial", rank.partial},
                     {"steps", rank.step_seconds.size()},
                     {"step_seconds", rank.step_seconds},
                     {"exposed_collective_seconds_per_step", rank.exposed_seconds},
                     {"step_median_seconds", rank.step_median_s},
                     {"compute_median_seconds", rank.compute_median_s},
                     {"exposed_collective_median_seconds", rank.exposed_median_s},
                     {"collectives", rank.collectives},
                     {"collective_seconds", rank.collective_s},
                     {"exposed_collective_seconds", rank.exposed_collective_s},
                     {"overlap_fraction", rank.overlap_fraction},
                     {"compile_seconds", rank.compile_s},
                     {"graph_breaks", rank.graph_breaks},
                     {"recompiles", rank.recompiles}});
  }
  nlohmann::json stragglers = nlohmann::json::array();
  for (const auto& s : ranks.stragglers) {
    stragglers.push_back({{"rank", s.rank}, {"slower_by_seconds", s.slower_by_s}, {"slower_fraction", s.slower_fraction},
                          {"steps_slower", s.steps_slower}, {"steps_compared", s.steps_compared},
                          {"others_wait_seconds", s.others_wait_s}});
  }
  nlohmann::json divergences = nlohmann::json::array();
  for (const auto& d : ranks.divergences) {
    divergences.push_back({{"rule", d.rule.text()},
                           {"file", sanitizeUtf8(d.file)},
                           {"line", d.line >= 0 ? nlohmann::json(d.line) : nlohmann::json(nullptr)},
                           {"function", sanitizeUtf8(d.function)},
                           {"ranks", d.ranks},
                           {"counts", d.counts},
                           {"majority_count", d.majority_count},
                           {"majority_ranks", d.majority_ranks},
                           {"registry_id", sanitizeUtf8(d.registry_id)},
                           {"detail", sanitizeUtf8(d.detail)},
                           {"compile_seconds", d.compile_seconds}});
  }
  return {{"world_size", ranks.world_size},   {"launcher", ranks.launcher},       {"job_id", sanitizeUtf8(ranks.job_id)},
          {"partial", ranks.partial},         {"partial_reasons", ranks.partial_reasons},
          {"ranks", table},                   {"stragglers", stragglers},         {"divergences", divergences}};
}

// Medians per step (steps after the first, which compiles); overlap over the run.
std::string ranksText(const RankAnalysis& ranks) {
  std::string out = fmt::format("\n{} ranks{}{}{}:\n", ranks.ranks.size(),
                                ranks.world_size > 0 ? fmt::format(" of a world of {}", ranks.world_size) : "",
                                ranks.launcher.empty() ? "" : " (" + ranks.launcher + ")",
                                ranks.partial ? " [partial]" : "");
  out += fmt::format("  {:>4}  {:<16} {:>5}  {:>12}  {:>12}  {:>14}  {:>8}  {:>9}  {:>6}  {:>10}\n", "rank", "host", "steps",
                     "step median", "compute", "waited (coll.)", "overlap", "compile", "breaks", "recompiles");
  for (const auto& rank : ranks.ranks) {
    out += fmt::format("  {:>4}  {:<16} {:>5}  {:>9.2f} ms  {:>9.2f} ms  {:>11.2f} ms  {:>7.0f}%  {:>7.2f} s  {:>6}  {:>10}{}\n",
                       rank.rank, sanitizeUtf8(rank.host.substr(0, 16)), rank.step_seconds.size(),
                       rank.step_median_s * 1e3, rank.compute_median_s * 1e3,
                       rank.exposed_median_s * 1e3,
                       rank.overlap_fraction * 100, rank.compile_s, rank.graph_breaks, rank.recompiles,
                       rank.partial ? "  [did not finish]" : "");
  }
  return out;
}

}  // namespace torchscope::analyzer::report
