// compile/does-not-pay: measured against a run of the same job with compilation off (`advise --against EAGER.db`),
// the compiled regions saved less over this run's calls than their compilation cost.
#include <fmt/format.h>

#include <algorithm>

#include "Rules.h"
#include "torchscope/analyzer/Regions.h"

namespace torchscope::analyzer {

std::optional<Finding> compilePaysFinding(const RegionTable& table, double run_duration_s) {
  if (!table.compared || table.compile_s <= 0 || table.pays()) return std::nullopt;
  std::vector<const Region*> gaining;
  const Region* costliest = nullptr;
  for (const auto& region : table.regions) {
    if (region.payoff_calls >= 0) gaining.push_back(&region);
    if (region.region >= 0 && (costliest == nullptr || region.compile_s > costliest->compile_s)) costliest = &region;
  }
  std::sort(gaining.begin(), gaining.end(), [](const Region* a, const Region* b) { return a->saved_s > b->saved_s; });
  std::string gain_text;
  if (gaining.empty()) {
    gain_text = " No region ran faster compiled than eagerly.";
  } else {
    gain_text = " The gain is in ";
    for (std::size_t i = 0; i < gaining.size() && i < 3; ++i) {
      const Region& region = *gaining[i];
      gain_text +=
          fmt::format("{}{} ({:.2f}x, {})", i > 0 ? "; " : "", region.name, region.speedup, regionPayoffText(region));
    }
    gain_text += ".";
  }
  const double lost = table.compile_s - table.saved_s;  // against the same run without compiling
  Finding finding = makeFinding(
      "compile/does-not-pay", Severity::kWarning,
      table.saved_s >= 0 ? fmt::format("Compilation does not pay at this run length: {} compiling, {} saved",
                                       regionSecondsText(table.compile_s), regionSecondsText(table.saved_s))
                         : fmt::format("Compilation does not pay: {} compiling, and the compiled regions {}",
                                       regionSecondsText(table.compile_s), regionsSavedText(table.saved_s)),
      fmt::format(
          "Measured against {} (the same job with compilation off): the compiled regions {} over this "
          "run's calls than eagerly, while compiling them took {}.{} A longer run, a compile cache shared "
          "between runs, or compiling only the regions that gain would change that.",
          table.against,
          table.saved_s >= 0 ? "ran " + regionSecondsText(table.saved_s) + " faster" : regionsSavedText(table.saved_s),
          regionSecondsText(table.compile_s), gain_text),
      {"", "compile only the regions that gain, or run long enough for them to pay off (advise --regions)"});
  if (costliest != nullptr) {
    finding.file = costliest->site_file;
    finding.line = costliest->site_line;
  }
  finding.count = static_cast<std::int64_t>(table.regions.size());
  finding.impact_seconds = lost;
  finding.impact_fraction = run_duration_s > 0 ? std::min(1.0, lost / run_duration_s) : 0;
  nlohmann::json regions = nlohmann::json::array();
  for (const auto& region : table.regions) {
    if (region.eager_wall_per_call_s < 0) continue;
    regions.push_back({{"name", region.name},
                       {"file", region.site_file},
                       {"line", region.site_line},
                       {"calls", region.calls},
                       {"compile_seconds", region.compile_s},
                       {"wall_per_call_seconds", region.wall_per_call_s},
                       {"eager_wall_per_call_seconds", region.eager_wall_per_call_s},
                       {"speedup", region.speedup},
                       {"payoff_calls", region.payoff_calls},
                       {"saved_seconds", region.saved_s}});
  }
  setEvidence(finding, {{"eager_store", table.against},
                        {"compile_seconds", table.compile_s},
                        {"saved_seconds", table.saved_s},
                        {"regions", regions}});
  return finding;
}

}  // namespace torchscope::analyzer
