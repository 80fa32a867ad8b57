#include "torchscope/compiler/Report.h"
#include "torchscope/analyzer/Escape.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace torchscope::compiler {
namespace {

nlohmann::json number(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr); }
nlohmann::json count(std::int64_t value) { return value >= 0 ? nlohmann::json(value) : nlohmann::json(nullptr); }

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

nlohmann::json outcomeJson(const FixOutcome& fix) {
  nlohmann::json out = {
      {"id", fix.id},
      {"kind", fix.kind},
      {"accepted", fix.accepted},
      {"measured", fix.measured},
      {"reason", fix.reason},
      {"diff", fix.diff},
  };
  if (fix.measured) {
    out["speedup"] = {{"median", number(fix.speedup.median)},
                      {"ci_low", number(fix.speedup.ci_low)},
                      {"ci_high", number(fix.speedup.ci_high)}};
    out["total_speedup"] = number(fix.total_speedup);
    out["step_time_median_s"] = number(fix.stats.step_time_median_s);
    out["total_time_s"] = number(fix.stats.total_time_s);
    out["compile_time_delta_s"] = number(fix.compile_time_delta_s);
    out["recompiles_after"] = count(fix.stats.recompiles);
    out["graph_breaks_after"] = count(fix.stats.graph_breaks);
    out["syncs_after"] = count(fix.stats.syncs);
    out["parity"] = {{"ok", fix.parity.ok}, {"checked", fix.parity.checked}, {"max_rel_diff", number(fix.parity.max_rel_diff)}};
    out["memory"] = memoryJson(fix);
  } else {
    out["speedup"] = {{"median", nullptr}, {"ci_low", nullptr}, {"ci_high", nullptr}};
    out["total_speedup"] = nullptr;
    out["compile_time_delta_s"] = nullptr;
    out["recompiles_after"] = nullptr;
    out["graph_breaks_after"] = nullptr;
    out["syncs_after"] = nullptr;
    out["parity"] = {{"ok", nullptr}, {"checked", false}, {"max_rel_diff", nullptr}};
    out["memory"] = nullptr;
  }
  if (!fix.members.empty()) out["members"] = fix.members;
  return out;
}

std::string speedupText(const FixOutcome& fix) {
  if (!fix.measured) return "-";
  if (!fix.speedup.valid()) return "n/a";
  return fmt::format("{:.3f}x [{:.3f}, {:.3f}]", fix.speedup.median, fix.speedup.ci_low, fix.speedup.ci_high);
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

std::string verdict(const FixOutcome& fix) {
  if (!fix.measured) return "skipped";
  return fix.accepted ? "accepted" : "rejected";
}

}  // namespace

nlohmann::json reportJson(const FixReport& report) {
  nlohmann::json out;
  out["command"] = report.command;
  out["repetitions"] = report.repetitions;
  out["steps_source"] = report.steps_source;
  out["collector"] = report.collector_used;
  out["statistics"] = "speed-up = baseline median step / candidate median step over steady-state steps; "
                      "95 % CI from a two-level bootstrap (repetitions, then steps), 2000 resamples";
  out["baseline"] = {{"step_time_median_s", number(report.baseline.step_time_median_s)},
                     {"total_time_s", number(report.baseline.total_time_s)},
                     {"compile_time_s", number(report.baseline.compile_time_s)},
                     {"recompiles", count(report.baseline.recompiles)},
                     {"graph_breaks", count(report.baseline.graph_breaks)},
                     {"syncs", count(report.baseline.syncs)},
                     {"memory", peaksJson(report.baseline)}};
  out["fixes"] = nlohmann::json::array();
  for (const auto& fix : report.fixes) out["fixes"].push_back(outcomeJson(fix));
  out["combined"] = report.combined ? outcomeJson(*report.combined) : nlohmann::json(nullptr);
  out["written_files"] = report.written_files;
  out["notes"] = report.notes;
  return out;
}

std::string renderText(const FixReport& report) {
  std::string out = fmt::format("torchscope fix: {}\n{} repetitions, interleaved; steps from the {}{}\n\n", report.command,
                                report.repetitions, report.steps_source.empty() ? "launcher" : report.steps_source,
                                report.collector_used ? " (runs under the collector)" : "");
  const auto& b = report.baseline;
  out += fmt::format("baseline: median step {:.4f} s, total {:.2f} s, compile {:.2f} s, recompiles {}, graph breaks {}, syncs {}\n"
                     "baseline memory: {}\n\n",
                     b.step_time_median_s, b.total_time_s, b.compile_time_s, countText(b.recompiles),
                     countText(b.graph_breaks), countText(b.syncs), peaksText(b));
  for (const FixOutcome* fix : rows(report)) {
    out += fmt::format("{:<34} {:<9} {}\n", displayName(*fix), verdict(*fix), fix->reason);
    if (!fix->measured) continue;
    out += fmt::format("    step speed-up {}  total {:.3f}x  compile {:+.2f} s\n", speedupText(*fix), fix->total_speedup,
                       fix->compile_time_delta_s);
    out += fmt::format("    recompiles {}  graph breaks {}  syncs {}  parity {}\n",
                       changeText(b.recompiles, fix->stats.recompiles), changeText(b.graph_breaks, fix->stats.graph_breaks),
                       changeText(b.syncs, fix->stats.syncs),
                       !fix->parity.checked ? "not checked"
                                            : fmt::format("{} (max rel. diff {:.2g})", fix->parity.ok ? "ok" : "BROKEN",
                                                          fix->parity.max_rel_diff));
    out += fmt::format("    memory {} ({} against the baseline)\n", peaksText(fix->stats), memoryChangeText(*fix));
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
  std::string out = fmt::format("# torchscope fix\n\n`{}` — {} repetitions, interleaved.\n\n", report.command, report.repetitions);
  out += fmt::format("Baseline: median step {:.4f} s, total {:.2f} s, compile {:.2f} s, recompiles {}, graph breaks {}, syncs {}.\n\n",
                     b.step_time_median_s, b.total_time_s, b.compile_time_s, countText(b.recompiles),
                     countText(b.graph_breaks), countText(b.syncs));
  out += fmt::format("Baseline memory: {}.\n\n", peaksText(b));
  out += "| fix | kind | verdict | step speed-up (95 % CI) | total | compile Δ | recompiles | breaks | syncs | parity | memory Δ | reason |\n";
  out += "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const FixOutcome* fix : rows(report)) {
    if (!fix->measured) {
      out += fmt::format("| `{}` | {} | {} | - | - | - | - | - | - | - | - | {} |\n", displayName(*fix), fix->kind, verdict(*fix), fix->reason);
      continue;
    }
    out += fmt::format("| `{}` | {} | {} | {} | {:.3f}x | {:+.2f} s | {} | {} | {} | {} | {} | {} |\n", displayName(*fix), fix->kind,
                       verdict(*fix), speedupText(*fix), fix->total_speedup, fix->compile_time_delta_s,
                       changeText(b.recompiles, fix->stats.recompiles), changeText(b.graph_breaks, fix->stats.graph_breaks),
                       changeText(b.syncs, fix->stats.syncs),
                       fix->parity.checked ? fmt::format("{} ({:.2g})", fix->parity.ok ? "ok" : "broken", fix->parity.max_rel_diff)
                                           : "not checked",
                       memoryChangeText(*fix), fix->reason);
  }
  for (const FixOutcome* fix : rows(report)) {
    if (!fix->diff.empty() && fix->kind != "combined") out += "\n## `" + fix->id + "`\n\n```diff\n" + fix->diff + "```\n";
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
         std::to_string(report.repetitions) + " repetitions, interleaved</p>\n";
  const auto& b = report.baseline;
  out += fmt::format("<p>Baseline: median step {:.4f} s, total {:.2f} s, compile {:.2f} s, recompiles {}, graph breaks {}, syncs {}; {}</p>\n",
                     b.step_time_median_s, b.total_time_s, b.compile_time_s, countText(b.recompiles),
                     countText(b.graph_breaks), countText(b.syncs), peaksText(b));
  out += "<table><tr><th>fix</th><th>kind</th><th>verdict</th><th>step speed-up (95 % CI)</th><th>total</th>"
         "<th>compile &Delta;</th><th>recompiles</th><th>breaks</th><th>syncs</th><th>parity</th><th>memory &Delta;</th>"
         "<th>reason</th></tr>\n";
  for (const FixOutcome* fix : rows(report)) {
    out += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                       "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       escapeHtml(displayName(*fix)), escapeHtml(fix->kind), verdict(*fix), verdict(*fix), escapeHtml(speedupText(*fix)),
                       fix->measured ? fmt::format("{:.3f}x", fix->total_speedup) : "-",
                       fix->measured ? fmt::format("{:+.2f} s", fix->compile_time_delta_s) : "-",
                       fix->measured ? changeText(b.recompiles, fix->stats.recompiles) : "-",
                       fix->measured ? changeText(b.graph_breaks, fix->stats.graph_breaks) : "-",
                       fix->measured ? changeText(b.syncs, fix->stats.syncs) : "-",
                       !fix->parity.checked ? "not checked" : (fix->parity.ok ? "ok" : "broken"),
                       fix->measured ? memoryChangeText(*fix) : "-", escapeHtml(fix->reason));
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
