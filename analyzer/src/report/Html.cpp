// One self-contained HTML page: step-time chart, timeline overview (HtmlOverview.cpp), memory and findings. No
// scripts, no external files; every string from the store is escaped.
#include <fmt/format.h>

#include <algorithm>

#include "Reports.h"
#include "torchscope/base/JsonText.h"

namespace torchscope::analyzer::report {

namespace {

constexpr int kWidth = 800;
constexpr int kHeight = 160;

constexpr std::string_view kStyle = R"css(
body{font-family:system-ui,sans-serif;margin:2em;max-width:900px;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.5em}
.run{color:#555}.headline{font-weight:bold}.note{background:#fff6d6;padding:.4em .6em;border-radius:4px}
.finding{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin:.8em 0}
.sev{font-weight:bold;text-transform:uppercase;font-size:.8em;padding:.1em .4em;border-radius:3px;color:#fff}
.error{background:#c62828}.warning{background:#ef8f00}.info{background:#1e88e5}
code,pre{background:#f4f4f4;border-radius:3px}pre{padding:.5em;overflow-x:auto;font-size:.85em}
svg{background:#fafafa;border:1px solid #eee}.legend{color:#555;font-size:.9em}
.finding:target{outline:2px solid #e65100}g.place:target rect{fill-opacity:1;stroke-width:3}
table.memory{border-collapse:collapse}table.memory th,table.memory td{border:1px solid #ddd;padding:.2em .6em;text-align:right}
table.memory th:first-child,table.memory td:first-child{text-align:left}
)css";

std::string stepChart(const RunSummary& run) {
  if (run.step_seconds.empty()) return "<p>No steps were recorded.</p>\n";
  const double top = *std::max_element(run.step_seconds.begin(), run.step_seconds.end());
  const double scale = top > 0 ? (kHeight - 20) / top : 0;
  const double dx = run.step_seconds.size() > 1 ? static_cast<double>(kWidth - 20) / static_cast<double>(run.step_seconds.size() - 1) : 0;
  std::string points;
  for (std::size_t i = 0; i < run.step_seconds.size(); ++i) {
    points += fmt::format("{:.1f},{:.1f} ", 10 + dx * static_cast<double>(i), kHeight - 10 - run.step_seconds[i] * scale);
  }
  const double median_y = kHeight - 10 - run.steady_step_median_s * scale;
  return fmt::format(
      "<svg width=\"{0}\" height=\"{1}\" role=\"img\" aria-label=\"step times\">"
      "<polyline fill=\"none\" stroke=\"#1e88e5\" stroke-width=\"1.5\" points=\"{2}\"/>"
      "<line x1=\"0\" x2=\"{0}\" y1=\"{3:.1f}\" y2=\"{3:.1f}\" stroke=\"#c62828\" stroke-dasharray=\"4\"/>"
      "<text x=\"12\" y=\"14\" font-size=\"11\">max {4:.2f} ms, steady-state median {5:.2f} ms (dashed), {6} steps</text>"
      "</svg>\n",
      kWidth, kHeight, points, median_y, top * 1e3, run.steady_step_median_s * 1e3, run.step_seconds.size());
}

// The run's memory: peak, value at the last step end and growth per step of each series.
std::string memoryTable(const RunSummary& run) {
  const auto rows = memoryRows(run.memory);
  if (rows.empty()) return "";
  std::string out = "<h3>Memory</h3>\n<table class=\"memory\"><tr><th>Memory</th><th>Peak</th>"
                    "<th>At the last step end</th><th>Growth per step</th></tr>\n";
  for (const auto& row : rows) {
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", escapeXml(row.what),
                       escapeXml(row.peak), escapeXml(row.last_step), escapeXml(row.growth));
  }
  return out + "</table>\n";
}

}  // namespace

std::string html(const Analysis& analysis) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
                    "<title>torchscope report</title><style>";
  out += kStyle;
  out += "</style></head><body>\n<h1>torchscope report</h1>\n<p class=\"headline\">" + escapeXml(headline(analysis)) + "</p>\n";
  for (const auto& note : analysis.notes) out += "<p class=\"note\">" + escapeXml(note) + "</p>\n";
  for (std::size_t run_index = 0; run_index < analysis.runs.size(); ++run_index) {
    const RunSummary& run = analysis.runs[run_index];
    out += fmt::format("<h2>{}</h2>\n<p class=\"run\">{}{:.2f} s{}{}</p>\n", escapeXml(run.path),
                       run.run.command_line.empty() ? "" : "<code>" + escapeXml(run.run.command_line) + "</code> &middot; ",
                       run.duration_s, run.compiles > 0 ? fmt::format(" &middot; {} compilations, {:.2f} s", run.compiles, run.compile_seconds) : "",
                       run.partial ? " &middot; <strong>partial: the run did not finish</strong>" : "");
    if (!run.window.whole()) out += "<p class=\"run\">" + escapeXml(run.window.describe()) + "</p>\n";
    out += (run.requests.recorded ? "<h3>Request latency</h3>\n" : "<h3>Step time</h3>\n") + stepChart(run);
    out += requestsHtml(run.requests);
    if (!run.timeline.empty()) {
      out += fmt::format("<h3>Timeline overview</h3>\n<p class=\"legend\">{:.2f} s from the start of the run; hover "
                         "for details, click a numbered finding to read it</p>\n",
                         run.duration_s);
      out += overviewChart(run, run_index, analysis.findings);
    }
    out += memoryTable(run);
    out += flameChart(run.flame);
  }
  out += fmt::format("<h2>Findings ({})</h2>\n", analysis.findings.size());
  if (analysis.findings.empty()) out += "<p>No findings: nothing in this run needs attention.</p>\n";
  for (std::size_t index = 0; index < analysis.findings.size(); ++index) {
    const Finding& finding = analysis.findings[index];
    std::string on_axis;
    for (std::size_t run_index = 0; run_index < analysis.runs.size() && on_axis.empty(); ++run_index) {
      if (!analysis.runs[run_index].timeline.empty() && hasPlace(analysis.runs[run_index], finding)) {
        on_axis = fmt::format(" &middot; <a href=\"#{}\">on the timeline</a>", placeId(run_index, index));
      }
    }
    const std::string_view severity = severityName(finding.severity);
    out += fmt::format(
        "<div class=\"finding\" id=\"finding-{11}\"><span class=\"sev {0}\">{0}</span> {11}. <code>{1}</code> "
        "<strong>{2}</strong><p>{3}</p><p>{4}{5}x &middot; impact {6:.3f} s ({7:.1f} % of the run){12}</p>"
        "<p><strong>Fix</strong>{8}: {9}</p><details><summary>Evidence</summary><pre>{10}</pre></details></div>\n",
        severity, escapeXml(finding.rule.text()), escapeXml(finding.title), escapeXml(finding.message),
        location(finding).empty() ? "" : "<code>" + escapeXml(location(finding)) + "</code> &middot; ", finding.count,
        finding.impact_seconds, finding.impact_fraction * 100,
        finding.fix_id.empty()
            ? ""
            : " <code>" + escapeXml(finding.fix_id) + "</code> (" + escapeXml(finding.fix_kind) + ")",
        escapeXml(finding.fix_summary), escapeXml(base::dumpJson(finding.evidence, 2)), index + 1, on_axis);
  }
  out += "</body></html>\n";
  return out;
}

}  // namespace torchscope::analyzer::report
