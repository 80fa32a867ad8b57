// Text (terminal) and Markdown reports.
#include <fmt/format.h>

#include "Reports.h"

namespace torchscope::analyzer::report {

namespace {

std::string paint(const RenderOptions& options, std::string_view code, std::string_view text) {
  if (!options.color) return std::string(text);
  return fmt::format("\x1b[{}m{}\x1b[0m", code, text);
}

std::string_view severityColor(Severity severity) {
  if (severity == Severity::kError) return "1;31";
  if (severity == Severity::kWarning) return "1;33";
  return "1;36";
}

// Peak RSS and its growth, each GPU's peaks, as a tail of the run line.
std::string memoryText(const MemorySummary& memory) {
  std::string line;
  if (memory.recorded && memory.peak_rss_bytes >= 0) {
    line += fmt::format(", peak RSS {}", formatBytes(static_cast<double>(memory.peak_rss_bytes)));
    if (memory.rss_growth_bytes_per_step > 0) {
      line += fmt::format(" (+{} per step)", formatBytes(memory.rss_growth_bytes_per_step));
    }
  }
  for (const auto& gpu : memory.devices) {
    line += fmt::format(", GPU {} peak {} allocated / {} reserved", gpu.device,
                        formatBytes(static_cast<double>(gpu.peak_allocated_bytes)),
                        formatBytes(static_cast<double>(gpu.peak_reserved_bytes)));
    if (gpu.allocated_growth_bytes_per_step > 0) {
      line += fmt::format(" (+{} allocated per step)", formatBytes(gpu.allocated_growth_bytes_per_step));
    }
  }
  return line;
}

// The run in one line; the Markdown report gives memory a section of its own instead.
std::string runLine(const RunSummary& run, bool with_memory) {
  std::string line = fmt::format("{}: {:.2f} s", run.path, run.duration_s);
  if (run.requests.recorded) {
    line += fmt::format(", {} requests", run.step_seconds.size());
  } else if (!run.step_seconds.empty()) {
    line += fmt::format(", {} steps, steady-state step median {:.2f} ms", run.step_seconds.size(),
                        run.steady_step_median_s * 1e3);
  }
  if (run.compiles > 0) line += fmt::format(", {} compilations ({:.2f} s)", run.compiles, run.compile_seconds);
  if (with_memory) line += memoryText(run.memory);
  if (run.partial) line += " [partial: the run did not finish]";
  if (!run.window.whole()) line += "\n  " + run.window.describe();
  return line;
}

// The run's memory as a table: peak, value at the last step end and growth per step of each series.
std::string markdownMemory(const RunSummary& run, bool name_run) {
  const auto rows = memoryRows(run.memory);
  if (rows.empty()) return "";
  std::string out = name_run ? fmt::format("### Memory of {}\n\n", escapeMarkdown(run.path)) : "### Memory\n\n";
  out += "| Memory | Peak | At the last step end | Growth per step |\n|---|---|---|---|\n";
  for (const auto& row : rows) {
    out += fmt::format("| {} | {} | {} | {} |\n", row.what, row.peak, row.last_step, row.growth);
  }
  return out + "\n";
}

}  // namespace

std::string text(const Analysis& analysis, const RenderOptions& options) {
  std::string out = paint(options, "1", sanitizeUtf8(headline(analysis))) + "\n\n";
  for (const auto& run : analysis.runs) out += sanitizeUtf8(runLine(run, true)) + "\n" + requestsText(run.requests);
  for (const auto& note : analysis.notes) out += paint(options, "2", "note: " + sanitizeUtf8(note)) + "\n";
  if (!analysis.ranks.empty()) out += ranksText(analysis.ranks);
  for (const auto& run : analysis.runs) out += linesText(run.lines, analysis.runs.size() > 1 ? run.path : "");
  if (analysis.findings.empty()) {
    out += "\nNo findings: nothing in this run needs attention.\n";
    return out;
  }
  out += fmt::format("\n{} finding(s), most impact first:\n", analysis.findings.size());
  int index = 0;
  for (const auto& finding : analysis.findings) {
    out += fmt::format("\n{:>2}. {} {}  {}\n", ++index,
                       paint(options, severityColor(finding.severity), severityName(finding.severity)),
                       paint(options, "1", finding.rule.text()), sanitizeUtf8(finding.title));
    std::string where = sanitizeUtf8(location(finding));
    out += fmt::format("    {}{}x, impact {:.3f} s ({:.1f} % of the run)\n", where.empty() ? "" : where + " | ",
                       finding.count, finding.impact_seconds, finding.impact_fraction * 100);
    out += "    " + sanitizeUtf8(finding.message) + "\n";
    out += fmt::format("    fix{}: {}\n",
                       finding.fix_id.empty() ? std::string(" (by hand)")
                                              : fmt::format(" [{} | {}]", finding.fix_id, finding.fix_kind),
                       sanitizeUtf8(finding.fix_summary));
  }
  return out;
}

std::string markdown(const Analysis& analysis) {
  std::string out = "## torchscope findings\n\n";
  for (const auto& run : analysis.runs) out += "- " + escapeMarkdown(runLine(run, false)) + "\n";
  for (const auto& note : analysis.notes) out += "- **Note:** " + escapeMarkdown(note) + "\n";
  out += "\n";
  for (const auto& run : analysis.runs) out += markdownMemory(run, analysis.runs.size() > 1);
  for (const auto& run : analysis.runs) {
    out += requestsMarkdown(run.requests, analysis.runs.size() > 1 ? run.path : "");
  }
  for (const auto& run : analysis.runs) out += linesMarkdown(run.lines, analysis.runs.size() > 1 ? run.path : "");
  if (analysis.findings.empty()) return out + "No findings: nothing in this run needs attention.\n";
  out += "| # | Severity | Rule | Location | Count | Impact | Fix |\n|---|---|---|---|---|---|---|\n";
  int index = 0;
  for (const auto& finding : analysis.findings) {
    out += fmt::format("| {} | {} | `{}` | {} | {} | {:.3f} s ({:.1f} %) | {} |\n", ++index,
                       severityName(finding.severity), finding.rule.text(), escapeMarkdown(location(finding)),
                       finding.count, finding.impact_seconds, finding.impact_fraction * 100,
                       finding.fix_id.empty() ? "by hand" : "`" + finding.fix_id + "`");
  }
  out += "\n";
  index = 0;
  for (const auto& finding : analysis.findings) {
    out += fmt::format("### {}. {}\n\n{}\n\n**Fix:** {}\n\n", ++index, escapeMarkdown(finding.title),
                       escapeMarkdown(finding.message), escapeMarkdown(finding.fix_summary));
  }
  return out;
}

}  // namespace torchscope::analyzer::report
