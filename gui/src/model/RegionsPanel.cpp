#include "torchscope/gui/RegionsPanel.h"

#include <fmt/format.h>

namespace torchscope::gui {
namespace {

using analyzer::regionPlaceText;
using analyzer::regionSecondsText;

std::string joined(const std::vector<std::string>& texts) {
  std::string out;
  for (const auto& text : texts) out += (out.empty() ? "" : "; ") + text;
  return out;
}

}  // namespace

void RegionsPanel::load(const std::string& path) {
  auto table = analyzer::regionTable(path);
  if (!table) {
    table_ = {};
    error_ = table.error().message;
    return;
  }
  setTable(std::move(*table));
}

void RegionsPanel::setTable(analyzer::RegionTable table) {
  table_ = std::move(table);
  error_.clear();
}

std::string RegionsPanel::header(int column) {
  static const char* const kHeaders[kColumnCount] = {
      "Region",    "Compiled at", "Called at",  "Compile",     "Graphs",      "Breaks",   "Recompiles",         "Calls",
      "Wall/call", "CPU/call",    "Step share", "Ran eagerly", "CUDA graphs", "Speed-up", "Compile time repaid"};
  return column >= 0 && column < kColumnCount ? kHeaders[column] : "";
}

std::string RegionsPanel::cell(std::size_t row, int column) const {
  if (row >= rows()) return "";
  const analyzer::Region& r = table_.regions[row];
  switch (column) {
    case kRegion: return r.name;
    case kCompiledAt: return regionPlaceText(r.site_file, r.site_line);
    case kCalledAt: return regionPlaceText(r.call_file, r.call_line);
    case kCompile:
      return fmt::format("{} (Dynamo {}, AOT {}, Inductor {})", regionSecondsText(r.compile_s),
                         regionSecondsText(r.dynamo_s), regionSecondsText(r.aot_s), regionSecondsText(r.inductor_s));
    case kGraphs: return std::to_string(r.graphs);
    case kGraphBreaks: return std::to_string(r.graph_breaks);
    case kRecompiles: {
      std::string text = std::to_string(r.recompiles);
      std::string causes;
      for (const auto& [cause, count] : r.recompile_causes)
        causes += fmt::format("{}{} {}", causes.empty() ? "" : ", ", cause, count);
      return causes.empty() ? text : text + " (" + causes + ")";
    }
    case kCalls: return r.calls >= 0 ? fmt::format("{} ({} compiling)", r.calls, r.compile_calls) : "not timed";
    case kWallPerCall: return regionSecondsText(r.wall_per_call_s);
    case kCpuPerCall:
      // The CPU time is read on some calls only: beside it, those calls' own wall time, as advise --regions says.
      if (r.cpu_per_call_s < 0 || r.cpu_wall_per_call_s < 0) return regionSecondsText(r.cpu_per_call_s);
      return fmt::format("{} (of {} wall, {} calls read)", regionSecondsText(r.cpu_per_call_s),
                         regionSecondsText(r.cpu_wall_per_call_s), r.cpu_calls);
    case kStepShare: return r.steady_share >= 0 ? fmt::format("{:.1f} %", r.steady_share * 100) : "";
    case kEager: return joined(r.eager);
    case kCudaGraphs: return r.cudagraphs;
    case kSpeedup: return r.speedup > 0 ? fmt::format("{:.2f}x", r.speedup) : "";
    case kPayoff:
      if (r.eager_wall_per_call_s < 0) return "";
      return r.payoff_calls >= 0 ? analyzer::regionPayoffText(r) : "never";
    default: return "";
  }
}

std::string RegionsPanel::summary() const {
  if (!error_.empty()) return "No region table: " + error_;
  if (table_.regions.empty()) return "The run compiled nothing.";
  std::string text = fmt::format("{} compiled region{}; the run compiled for {}", table_.regions.size(),
                                 table_.regions.size() == 1 ? "" : "s", regionSecondsText(table_.compile_s));
  if (table_.steady_steps > 0) text += fmt::format(", steady-state step {}", regionSecondsText(table_.steady_step_s));
  if (!table_.compiled_run_measured) text += "; calls were not timed in this store";
  return text + ". Eager against compiled: torchscope advise --regions RUN.db --against EAGER.db";
}

}  // namespace torchscope::gui
