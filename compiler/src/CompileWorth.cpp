#include "torchscope/compiler/CompileWorth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace torchscope::compiler {

namespace {

std::string place(const analyzer::Region& region) {
  return region.call_file.empty() ? region.name
                                  : fmt::format("{} (called at {})", region.name,
                                                analyzer::regionPlaceText(region.call_file, region.call_line));
}

std::string secondsText(double seconds) { return analyzer::regionSecondsText(seconds); }

}  // namespace

std::string CompileWorth::verdict() const {
  if (regions.empty()) return "no compiled region was timed: nothing to compare per region";
  std::vector<const analyzer::Region*> gaining;
  for (const auto& region : regions) {
    if (region.payoff_calls >= 0) gaining.push_back(&region);
  }
  std::string carriers;
  for (const analyzer::Region* region : gaining) {
    carriers += fmt::format("{}{} ({:.2f}x, {})", carriers.empty() ? "" : "; ", place(*region), region->speedup,
                            analyzer::regionPayoffText(*region));
  }
  // Signed, in the words of `advise --regions` on the same stores: regions slower compiled "ran ... slower".
  const std::string head = fmt::format("compilation took {}; the compiled regions {} over this run's calls",
                                       secondsText(compile_s), analyzer::regionsSavedText(saved_s));
  if (gaining.empty()) {
    return head + ": compilation does not pay at any run length, no region ran faster compiled than eagerly";
  }
  if (!pays()) {
    return head + fmt::format(
                      ": compilation does not pay at this run length (the regions would have to save "
                      "another {}). The gain is carried by {}",
                      secondsText(compile_s - saved_s), carriers);
  }
  return head + ": compilation pays at this run length. The gain is carried by " + carriers;
}

nlohmann::json compileWorthJson(const CompileWorth& worth) {
  const auto known = [](double value) { return value >= 0 ? nlohmann::json(value) : nlohmann::json(nullptr); };
  nlohmann::json regions = nlohmann::json::array();
  for (const auto& region : worth.regions) {
    regions.push_back(
        {{"name", region.name},
         {"call_file", region.call_file},
         {"call_line", region.call_line >= 0 ? nlohmann::json(region.call_line) : nlohmann::json(nullptr)},
         {"calls", std::max<std::int64_t>(region.calls, 0)},
         {"eager_calls", std::max<std::int64_t>(region.eager_calls, 0)},
         {"compile_s", region.compile_s},
         {"compiled_per_call_s", known(region.wall_per_call_s)},
         {"eager_per_call_s", known(region.eager_wall_per_call_s)},
         {"speedup", known(region.speedup)},
         {"payoff_calls", known(region.payoff_calls)},
         {"saved_s", region.saved_s}});
  }
  return {{"compile_s", worth.compile_s},
          {"saved_s", worth.saved_s},
          {"pays", worth.pays()},
          {"verdict", worth.verdict()},
          {"compiled_store", worth.compiled_store},
          {"eager_store", worth.eager_store},
          {"compiled_step_s", known(worth.compiled_step_s)},
          {"eager_step_s", known(worth.eager_step_s)},
          {"regions", regions},
          {"notes", worth.notes}};
}

std::string compileWorthText(const CompileWorth& worth, const std::string& indent) {
  const auto orDash = [](const std::string& text) { return text.empty() ? std::string("-") : text; };
  std::string out = fmt::format("{}{:<40} {:>7} {:>10} {:>10} {:>8} {:>10} {:>10}\n", indent, "compiled region (call)",
                                "calls", "eager/call", "comp/call", "speed-up", "compile", "pays after");
  for (const auto& region : worth.regions) {
    out +=
        fmt::format("{}{:<40} {:>7} {:>10} {:>10} {:>8} {:>10} {:>10}\n", indent, place(region), region.calls,
                    orDash(secondsText(region.eager_wall_per_call_s)), orDash(secondsText(region.wall_per_call_s)),
                    region.speedup >= 0 ? fmt::format("{:.2f}x", region.speedup) : "-", secondsText(region.compile_s),
                    region.payoff_calls >= 0 ? fmt::format("{:.0f} calls", std::ceil(region.payoff_calls)) : "never");
  }
  out += indent + worth.verdict() + "\n";
  for (const auto& note : worth.notes) out += indent + "note: " + note + "\n";
  return out;
}

Result<CompileWorth> compileWorth(const std::string& compiled_store, const std::string& eager_store) {
  auto table = analyzer::regionTable(compiled_store, eager_store);
  if (!table) return table.error();
  CompileWorth worth;
  worth.compiled_store = compiled_store;
  worth.eager_store = eager_store;
  worth.compile_s = table->compile_s;
  worth.compiled_step_s = table->steady_steps > 0 ? table->steady_step_s : -1;
  worth.eager_step_s = table->eager_steady_step_s;
  worth.notes = table->notes;
  for (auto& region : table->regions) {
    if (region.region < 0) continue;  // frames compiled outside any timed region: nothing to match
    worth.saved_s += region.saved_s;
    worth.regions.push_back(std::move(region));
  }
  std::stable_sort(worth.regions.begin(), worth.regions.end(),
                   [](const analyzer::Region& a, const analyzer::Region& b) { return a.saved_s > b.saved_s; });
  return worth;
}

}  // namespace torchscope::compiler
