#include "torchscope/compiler/Report.h"
#include "torchscope/analyzer/Escape.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace torchscope::compiler {
namespace {

nlohmann::json number(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr); }
nlohmann::json count(std::int64_t value) { return value >= 0 ? nlohmann::json(value) : nlohmann::json(nullptr); }
nlohmann::json known(double value) { return value >= 0 ? number(value) : nlohmann::json(nullptr); }

nlohmann::json peaksJson(const VariantStats& stats) {
  return {{"peak_rss_bytes", count(stats.peak_rss_bytes)},
          {"gpu_peak_allocated_bytes", count(stats.gpu_peak_allocated_bytes)},
          {"gpu_peak_reserved_bytes", count(stats.gpu_peak_reserved_bytes)}};
}

// What the fix costs (+) or saves (-) in memory, on the figure the memory limit uses.
nlohmann::json memoryJson(const FixOutcome& fix) {
  nlohmann::json out = peaksJson(fix.stats);
  out["basis"] = fix.memory.basis;
  out["increase"] = fix.memory.known() ? number(fix.memory.increase) : nlohmann::json(nullptr);
  out["delta_bytes"] = fix.memory.known() ? nlohmann::json(fix.memory.candidate_bytes - fix.memory.baseline_bytes)
                                          : nlohmann::json(nullptr);
  return out;
}

std::string mib(std::int64_t bytes) { return bytes < 0 ? "?" : fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

std::string peaksText(const VariantStats& stats) {
  std::string text = "peak RSS " + mib(stats.peak_rss_bytes);
  if (stats.gpu_peak_reserved_bytes >= 0) {
    text += fmt::format(", GPU peak allocated {} / reserved {}", mib(stats.gpu_peak_allocated_bytes),
                        mib(stats.gpu_peak_reserved_bytes));
  }
  return text;
}

std::string memoryChangeText(const FixOutcome& fix) {
  if (!fix.memory.known()) return "?";
  return fmt::format("{:+.1f} %", fix.memory.increase * 100);
}

nlohmann::json intervalJson(const SpeedupInterval& interval) {
  return {{"median", number(interval.estimate)}, {"ci_low", number(interval.ci_low)}, {"ci_high", number(interval.ci_high)}};
}

nlohmann::json ruleJson(const SequentialRule& rule) {
  return {{"min_runs", rule.min_runs}, {"max_runs", rule.max_runs}, {"alpha", rule.alpha},
          {"min_gain", rule.min_gain}, {"look_confidence", rule.lookConfidence()}};
}

nlohmann::json effectJson(const FixOutcome& fix) {
  if (!fix.effect.checkable) return nullptr;
  return {{"text", fix.effect.text}, {"shown", fix.effect.shown}, {"before", fix.effect.before}, {"after", fix.effect.after}};
}

nlohmann::json payoffJson(const Payoff& payoff) {
  if (!payoff.known()) return nullptr;
  return {{"clock", payoff.clock},
          {"compile_saved_s", number(payoff.compile_saved_s)},
          {"step_saved_s", number(payoff.step_saved_s)},
          {"step_speedup", intervalJson(payoff.step_speedup)},
          {"when", payoff.when},
          {"steps", known(payoff.steps)},
          {"text", payoff.text()}};
}

nlohmann::json outcomeJson(const FixOutcome& fix, const std::string& verdict_metric) {
  nlohmann::json out = {
      {"id", fix.id},
      {"kind", fix.kind},
      {"status", fix.status},
      {"accepted", fix.accepted},
      {"measured", fix.measured},
      {"reason", fix.reason},
      {"diff", fix.diff},
      {"finding", fix.finding},
      {"impact_fraction", known(fix.impact_fraction)},
  };
  if (fix.measured) {
    out["runs"] = fix.stats.runs;
    out["speedup"] = intervalJson(fix.speedup);
    out["total_speedup"] = number(fix.total_speedup);
    out["step_time_median_s"] = number(fix.stats.step_time_median_s);
    out["total_time_s"] = number(fix.stats.total_time_s);
    out["compile_time_delta_s"] = number(fix.compile_time_delta_s);
    out["recompiles_after"] = count(fix.stats.recompiles);
    out["graph_breaks_after"] = count(fix.stats.graph_breaks);
    out["syncs_after"] = count(fix.stats.syncs);
    out["parity"] = {{"ok", fix.parity.ok},
                     {"checked", fix.parity.checked},
                     {"max_rel_diff", number(fix.parity.max_rel_diff)},
                     {"basis", fix.parity.basis},
                     {"comparable", fix.parity.comparable},
                     {"max_abs_diff", number(fix.parity.max_abs_diff)},
                     {"top1_agreement", fix.parity.top1_agreement},
                     {"tolerance", fix.parity.tolerance}};
    nlohmann::json verdict = intervalJson(fix.verdict);
    verdict["metric"] = verdict_metric;
    verdict["confidence"] = fix.verdict.confidence;
    out["verdict"] = verdict;
    out["metrics"] = metricsJson(fix.stats);
    out["effect"] = effectJson(fix);
    out["break_even_steps"] = known(fix.break_even_steps);
    out["payoff"] = payoffJson(fix.payoff);
    out["memory"] = memoryJson(fix);
  } else {
    out["runs"] = 0;
    out["speedup"] = {{"median", nullptr}, {"ci_low", nullptr}, {"ci_high", nullptr}};
    out["total_speedup"] = nullptr;
    out["compile_time_delta_s"] = nullptr;
    out["recompiles_after"] = nullptr;
    out["graph_breaks_after"] = nullptr;
    out["syncs_after"] = nullptr;
    out["parity"] = {{"ok", nullptr}, {"checked", false}, {"max_rel_diff", nullptr}};
    out["verdict"] = nullptr;
    out["metrics"] = nlohmann::json::object();
    out["effect"] = nullptr;
    out["break_even_steps"] = nullptr;
    out["payoff"] = nullptr;
    out["memory"] = nullptr;
  }
  if (!fix.members.empty()) out["members"] = fix.members;
  out["regions"] = fix.compile_worth ? compileWorthJson(*fix.compile_worth) : nlohmann::json(nullptr);
  return out;
}

std::string seconds(double value) {
  if (!(value >= 0)) return "?";
  return value < 1 ? fmt::format("{:.1f} ms", value * 1e3) : fmt::format("{:.2f} s", value);
}

std::string intervalOrNotApplicable(const SpeedupInterval& interval) {
  if (!std::isfinite(interval.estimate)) return "n/a";
  if (!interval.valid()) return fmt::format("{:.3f}x", interval.estimate);
  return fmt::format("{:.3f}x [{:.3f}, {:.3f}]", interval.estimate, interval.ci_low, interval.ci_high);
}

std::string countText(std::int64_t value) { return value < 0 ? "?" : std::to_string(value); }

std::string changeText(std::int64_t before, std::int64_t after) { return countText(before) + " -> " + countText(after); }

std::string escapeHtml(const std::string& text) { return analyzer::escapeXml(text); }

std::vector<const FixOutcome*> rows(const FixReport& report) {
  std::vector<const FixOutcome*> all;
  for (const auto& fix : report.fixes) all.push_back(&fix);
  if (report.combined) all.push_back(&*report.combined);
  return all;
}

std::string displayName(const FixOutcome& fix) {
  if (fix.members.empty()) return fix.id;
  std::string members;
  for (const auto& member : fix.members) members += (members.empty() ? "" : ", ") + member;
  return fix.id + " (" + members + ")";
}

std::string status(const FixOutcome& fix) { return fix.status.empty() ? (fix.accepted ? "accepted" : "rejected") : fix.status; }

double metricMedian(const VariantStats& stats, const Metric& metric) {
  const auto found = stats.metrics.find(metric.name());
  return found == stats.metrics.end() ? -1 : found->second.median_s;
}

SpeedupInterval metricSpeedup(const VariantStats& stats, const Metric& metric) {
  const auto found = stats.metrics.find(metric.name());
  return found == stats.metrics.end() ? SpeedupInterval{} : found->second.speedup;
}

std::string parityText(const ParityResult& parity) {
  if (!parity.checked) return "not checked";
  return fmt::format("{} (max rel. diff {:.2g})", parity.ok ? "ok" : "BROKEN", parity.max_rel_diff);
}

std::string method(const FixReport& report) {
  Metric verdict{};
  if (auto parsed = parseMetric(report.verdict_metric)) verdict = *parsed;
  return fmt::format(
      "Verdicts rest on the {} of the process tree; a fix runs {} to {} times and stops once the interval of its "
      "speed-up (at {:.1f} % per look, {:.0f} % over all looks) excludes no change, the combination from its first run.",
      verdict.title(), report.fix_rule.min_runs, report.fix_rule.max_runs, report.fix_rule.lookConfidence() * 100,
      (1 - report.fix_rule.alpha) * 100);
}

}  // namespace

nlohmann::json metricsJson(const VariantStats& stats) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, summary] : stats.metrics) {
    nlohmann::json entry = {{"median_s", known(summary.median_s)}, {"runs_s", summary.runs_s}};
    if (std::isfinite(summary.speedup.estimate)) entry["speedup"] = intervalJson(summary.speedup);
    out[name] = entry;
  }
  return out;
}

nlohmann::json reportJson(const FixReport& report) {
  nlohmann::json out;
  out["command"] = report.command;
  out["repetitions"] = report.repetitions;
  out["runs"] = report.runs;
  out["parallel_runs"] = report.parallel_runs;
  out["steps_source"] = report.steps_source;
  out["window_steps"] = report.window_steps > 0 ? nlohmann::json(report.window_steps) : nlohmann::json(nullptr);
  out["window_reached"] = report.window_reached;
  out["collector"] = report.collector_used;
  out["verdict_metric"] = report.verdict_metric;
  out["sequential"] = {{"fixes", ruleJson(report.fix_rule)}, {"combined", ruleJson(report.combined_rule)}};
  out["statistics"] = "per run: end-to-end, time to the first step, compile and median steady-state step, as wall time "
                      "and as CPU time of the process tree; speed-up = ratio of geometric means over runs, baseline / "
                      "candidate; interval: Student's t on the difference of mean logs, run-to-run noise pooled over "
                      "all variants; the verdict's interval at the Bonferroni level of the sequential design, the "
                      "others at 95 %";
  out["baseline"] = {{"step_time_median_s", number(report.baseline.step_time_median_s)},
                     {"total_time_s", number(report.baseline.total_time_s)},
                     {"compile_time_s", number(report.baseline.compile_time_s)},
                     {"recompiles", count(report.baseline.recompiles)},
                     {"graph_breaks", count(report.baseline.graph_breaks)},
                     {"syncs", count(report.baseline.syncs)},
                     {"runs", report.baseline.runs},
                     {"metrics", metricsJson(report.baseline)},
                     {"memory", peaksJson(report.baseline)}};
  out["fixes"] = nlohmann::json::array();
  for (const auto& fix : report.fixes) out["fixes"].push_back(outcomeJson(fix, report.verdict_metric));
  out["combined"] = report.combined ? outcomeJson(*report.combined, report.verdict_metric) : nlohmann::json(nullptr);
  out["written_files"] = report.written_files;
  out["notes"] = report.notes;
  return out;
}

std::string renderText(const FixReport& report) {
  std::string out = fmt::format("torchscope fix: {}\n{}\n{} runs of the job; steps from the {}{}\n\n", report.command,
                                method(report), report.runs, report.steps_source.empty() ? "launcher" : report.steps_source,
                                report.collector_used ? " (runs under the collector)" : "");
  const auto& b = report.baseline;
  out += fmt::format("baseline, {} runs: recompiles {}, graph breaks {}, syncs {}\nbaseline memory: {}\n\n", b.runs,
                     countText(b.recompiles), countText(b.graph_breaks), countText(b.syncs), peaksText(b));
  for (const FixOutcome* fix : rows(report)) {
    out += fmt::format("{:<34} {:<9} {}\n", displayName(*fix), status(*fix), fix->reason);
    if (!fix->finding.empty() || fix->impact_fraction >= 0) {
      out += fmt::format("    finding: {}{}\n", fix->finding.empty() ? "-" : fix->finding,
                         fix->impact_fraction >= 0 ? fmt::format(", {:.1f} % of the run", fix->impact_fraction * 100) : "");
    }
    if (!fix->measured) continue;
    out += fmt::format("    {:<30} {:>10} {:>10}   {}\n", "median over runs", "baseline", "with it", "speed-up (95 % interval)");
    for (const Metric& metric : allMetrics()) {
      out += fmt::format("    {:<30} {:>10} {:>10}   {}\n",
                         metric.title() + (metric.name() == report.verdict_metric ? " *" : ""),
                         seconds(metricMedian(b, metric)), seconds(metricMedian(fix->stats, metric)),
                         intervalOrNotApplicable(metricSpeedup(fix->stats, metric)));
    }
    out += fmt::format("    {} runs; recompiles {}  graph breaks {}  syncs {}  parity {}\n", fix->stats.runs,
                       changeText(b.recompiles, fix->stats.recompiles), changeText(b.graph_breaks, fix->stats.graph_breaks),
                       changeText(b.syncs, fix->stats.syncs), parityText(fix->parity));
    out += fmt::format("    memory {} ({} against the baseline)\n", peaksText(fix->stats), memoryChangeText(*fix));
    if (fix->compile_worth) out += compileWorthText(*fix->compile_worth, "    ");
  }
  for (const FixOutcome* fix : rows(report)) {
    if (!fix->diff.empty() && fix->kind != "combined") out += "\n" + fix->id + ":\n" + fix->diff;
  }
  for (const auto& file : report.written_files) out += "\nwritten: " + file;
  for (const auto& note : report.notes) out += "\nnote: " + note;
  if (!report.written_files.empty() || !report.notes.empty()) out += "\n";
  return out;
}

std::string renderMarkdown(const FixReport& report) {
  const auto& b = report.baseline;
  std::string out = fmt::format("# torchscope fix\n\n`{}` — {} runs of the job.\n\n{}\n\n", report.command, report.runs,
                                method(report));
  out += fmt::format("Baseline ({} runs): end-to-end {} wall, {} CPU; recompiles {}, graph breaks {}, syncs {}.\n\n", b.runs,
                     seconds(metricMedian(b, {Measure::kEndToEnd, Clock::kWall})),
                     seconds(metricMedian(b, {Measure::kEndToEnd, Clock::kCpu})), countText(b.recompiles),
                     countText(b.graph_breaks), countText(b.syncs));
  out += fmt::format("Baseline memory: {}.\n\n", peaksText(b));
  out += "| fix | kind | verdict | runs | verdict speed-up | end-to-end wall | end-to-end CPU | first step CPU | compile CPU "
         "| steady step wall (95 % CI) | recompiles | breaks | syncs | parity | memory Δ | reason |\n";
  out += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const FixOutcome* fix : rows(report)) {
    if (!fix->measured) {
      out += fmt::format("| `{}` | {} | {} | 0 | - | - | - | - | - | - | - | - | - | - | - | {} |\n", displayName(*fix),
                         fix->kind, status(*fix), fix->reason);
      continue;
    }
    const auto speedup = [&](Measure measure, Clock clock) {
      return intervalOrNotApplicable(metricSpeedup(fix->stats, {measure, clock}));
    };
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", displayName(*fix),
                       fix->kind, status(*fix), fix->stats.runs, intervalOrNotApplicable(fix->verdict),
                       speedup(Measure::kEndToEnd, Clock::kWall), speedup(Measure::kEndToEnd, Clock::kCpu),
                       speedup(Measure::kFirstStep, Clock::kCpu), speedup(Measure::kCompile, Clock::kCpu),
                       intervalOrNotApplicable(fix->speedup), changeText(b.recompiles, fix->stats.recompiles),
                       changeText(b.graph_breaks, fix->stats.graph_breaks), changeText(b.syncs, fix->stats.syncs),
                       parityText(fix->parity), memoryChangeText(*fix), fix->reason);
  }
  for (const FixOutcome* fix : rows(report)) {
    if (!fix->diff.empty() && fix->kind != "combined") out += "\n## `" + fix->id + "`\n\n```diff\n" + fix->diff + "```\n";
  }
  for (const FixOutcome* fix : rows(report)) {
    if (fix->compile_worth) {
      out += "\n## `" + fix->id + "`: eager versus compiled, per region\n\n```\n" +
             compileWorthText(*fix->compile_worth, "") + "```\n";
    }
  }
  for (const auto& note : report.notes) out += "\n> " + note + "\n";
  return out;
}

std::string renderHtml(const FixReport& report) {
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>torchscope fix</title><style>"
      "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}"
      ".accepted{color:#060}.rejected{color:#a00}pre{background:#f6f6f6;padding:8px}</style></head><body>\n";
  out += "<h1>torchscope fix</h1>\n<p><code>" + escapeHtml(report.command) + "</code> &mdash; " +
         std::to_string(report.runs) + " runs of the job</p>\n<p>" + escapeHtml(method(report)) + "</p>\n";
  const auto& b = report.baseline;
  out += fmt::format("<p>Baseline ({} runs): end-to-end {} wall, {} CPU; recompiles {}, graph breaks {}, syncs {}; {}</p>\n",
                     b.runs, seconds(metricMedian(b, {Measure::kEndToEnd, Clock::kWall})),
                     seconds(metricMedian(b, {Measure::kEndToEnd, Clock::kCpu})), countText(b.recompiles),
                     countText(b.graph_breaks), countText(b.syncs), peaksText(b));
  out += "<table><tr><th>fix</th><th>kind</th><th>verdict</th><th>runs</th><th>verdict speed-up</th>"
         "<th>end-to-end wall</th><th>end-to-end CPU</th><th>steady step wall (95 % CI)</th><th>recompiles</th>"
         "<th>breaks</th><th>syncs</th><th>parity</th><th>memory &Delta;</th><th>reason</th></tr>\n";
  for (const FixOutcome* fix : rows(report)) {
    const auto cell = [&](const std::string& text) { return fix->measured ? escapeHtml(text) : std::string("-"); };
    out += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                       "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       escapeHtml(displayName(*fix)), escapeHtml(fix->kind), fix->accepted ? "accepted" : "rejected",
                       escapeHtml(status(*fix)), fix->measured ? fix->stats.runs : 0, cell(intervalOrNotApplicable(fix->verdict)),
                       cell(intervalOrNotApplicable(metricSpeedup(fix->stats, {Measure::kEndToEnd, Clock::kWall}))),
                       cell(intervalOrNotApplicable(metricSpeedup(fix->stats, {Measure::kEndToEnd, Clock::kCpu}))),
                       cell(intervalOrNotApplicable(fix->speedup)), cell(changeText(b.recompiles, fix->stats.recompiles)),
                       cell(changeText(b.graph_breaks, fix->stats.graph_breaks)), cell(changeText(b.syncs, fix->stats.syncs)),
                       cell(parityText(fix->parity)), cell(memoryChangeText(*fix)), escapeHtml(fix->reason));
  }
  out += "</table>\n";
  for (const FixOutcome* fix : rows(report)) {
    if (!fix->diff.empty() && fix->kind != "combined") {
      out += "<h2>" + escapeHtml(fix->id) + "</h2>\n<pre>" + escapeHtml(fix->diff) + "</pre>\n";
    }
  }
  for (const auto& note : report.notes) out += "<p><em>" + escapeHtml(note) + "</em></p>\n";
  return out + "</body></html>\n";
}

}  // namespace torchscope::compiler
