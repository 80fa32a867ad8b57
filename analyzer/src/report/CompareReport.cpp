// Renders a Comparison in every report format.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "Reports.h"
#include "torchscope/analyzer/Compare.h"
#include "torchscope/base/JsonText.h"

namespace torchscope::analyzer {

namespace {

using report::escapeMarkdown;
using report::escapeXml;
using report::sanitizeUtf8;

std::string where(const ProblemChange& change) {
  if (change.file.empty() && change.function.empty()) return "an unknown place";
  std::string text = change.line >= 0 ? fmt::format("{}:{}", change.file, change.line) : change.file;
  if (!change.function.empty()) text += " (" + change.function + ")";
  return text;
}

std::string where(const FindingChange& change) {
  return where(ProblemChange{"", change.file, change.line, change.function, "", 0});
}

std::string verdict(const Comparison& c) { return c.failed() ? "FAIL" : "PASS"; }

// "rank 2: 10.000 ms -> 12.000 ms (+20.0 %)", with the slowest rank of each side marked.
std::string rankLine(const Comparison& c, const RankStepChange& rank) {
  std::string marks;
  if (rank.rank == c.base_slowest_rank) marks += ", slowest in the baseline";
  if (rank.rank == c.new_slowest_rank) marks += ", slowest in the new run";
  return fmt::format("rank {}: {:.3f} ms -> {:.3f} ms ({:+.1f} %; {} -> {} steps{})", rank.rank, rank.base_steps.median_s * 1e3,
                     rank.new_steps.median_s * 1e3, rank.change_percent, rank.base_steps.steps, rank.new_steps.steps, marks);
}

// "2x on ranks 1 and 3" / "2x"
std::string countLine(std::int64_t count, const std::vector<std::int64_t>& ranks) {
  if (ranks.empty()) return fmt::format("{}x", count);
  return fmt::format("{}x on rank{} {}", count, ranks.size() == 1 ? "" : "s", fmt::join(ranks, ", "));
}

std::string findingLine(const FindingChange& f, const std::string& state) {
  std::string line = fmt::format("{} finding {} at {}: {}", state, f.rule.text(), where(f), f.title);
  if (state == "changed") {
    line += fmt::format(" ({} -> {})", countLine(f.base_count, f.base_ranks), countLine(f.new_count, f.new_ranks));
  }
  return line;
}

// The merged findings' changes, each with its state word.
std::vector<std::pair<std::string, const FindingChange*>> findingChanges(const Comparison& c) {
  std::vector<std::pair<std::string, const FindingChange*>> all;
  for (const auto& f : c.new_findings) all.emplace_back("new", &f);
  for (const auto& f : c.changed_findings) all.emplace_back("changed", &f);
  for (const auto& f : c.gone_findings) all.emplace_back("gone", &f);
  return all;
}

std::string stepLine(const Comparison& c) {
  return fmt::format("steady-state step median {:.3f} ms -> {:.3f} ms ({:+.1f} %, p = {:.3g}; p10-p90 {:.3f}-{:.3f} -> "
                     "{:.3f}-{:.3f} ms; {} -> {} steps)",
                     c.base_steps.median_s * 1e3, c.new_steps.median_s * 1e3, c.step_change_percent, c.p_value,
                     c.base_steps.p10_s * 1e3, c.base_steps.p90_s * 1e3, c.new_steps.p10_s * 1e3,
                     c.new_steps.p90_s * 1e3, c.base_steps.steps, c.new_steps.steps);
}

std::string compileLine(const Comparison& c) {
  return fmt::format("compile time {:.2f} s -> {:.2f} s", c.base_compile_s, c.new_compile_s);
}

nlohmann::json changeJson(const ProblemChange& change) {
  return {{"kind", change.kind},
          {"location", {{"file", sanitizeUtf8(change.file)},
                        {"line", change.line >= 0 ? nlohmann::json(change.line) : nlohmann::json(nullptr)},
                        {"function", sanitizeUtf8(change.function)}}},
          {"detail", sanitizeUtf8(change.detail)},
          {"count", change.count}};
}

nlohmann::json stepsJson(const StepTimeStats& steps) {
  return {{"steps", steps.steps}, {"median_seconds", steps.median_s}, {"p10_seconds", steps.p10_s}, {"p90_seconds", steps.p90_s}};
}

nlohmann::json findingChangeJson(const FindingChange& f) {
  return {{"rule", f.rule.text()},
          {"title", sanitizeUtf8(f.title)},
          {"location",
           {{"file", sanitizeUtf8(f.file)},
            {"line", f.line >= 0 ? nlohmann::json(f.line) : nlohmann::json(nullptr)},
            {"function", sanitizeUtf8(f.function)}}},
          {"base_count", f.base_count},
          {"new_count", f.new_count},
          {"base_ranks", f.base_ranks},
          {"new_ranks", f.new_ranks}};
}

std::string json(const Comparison& c) {
  nlohmann::json document = {
      {"schema", "torchscope.compare/1"},
      {"base", sanitizeUtf8(c.base_path)},
      {"new", sanitizeUtf8(c.new_path)},
      {"threshold_percent", c.threshold_percent},
      {"failed", c.failed()},
      {"step_time",
       {{"base", stepsJson(c.base_steps)},
        {"new", stepsJson(c.new_steps)},
        {"change_percent", c.step_change_percent},
        {"p_value", c.p_value},
        {"regression", c.step_regression}}},
      {"compile_time", {{"base_seconds", c.base_compile_s}, {"new_seconds", c.new_compile_s},
                        {"regression", c.compile_regression}}},
      {"new_problems", nlohmann::json::array()},
      {"gone_problems", nlohmann::json::array()},
      {"ranks", nlohmann::json::array()},
      {"slowest_rank", {{"base", c.base_slowest_rank >= 0 ? nlohmann::json(c.base_slowest_rank) : nlohmann::json(nullptr)},
                        {"new", c.new_slowest_rank >= 0 ? nlohmann::json(c.new_slowest_rank) : nlohmann::json(nullptr)}}},
      {"findings", {{"new", nlohmann::json::array()}, {"gone", nlohmann::json::array()}, {"changed", nlohmann::json::array()}}},
      {"divergence_regression", c.divergence_regression},
      {"notes", nlohmann::json::array()}};
  for (const auto& rank : c.ranks) {
    document["ranks"].push_back({{"rank", rank.rank}, {"base", stepsJson(rank.base_steps)}, {"new", stepsJson(rank.new_steps)},
                                 {"change_percent", rank.change_percent}});
  }
  for (const auto& f : c.new_findings) document["findings"]["new"].push_back(findingChangeJson(f));
  for (const auto& f : c.gone_findings) document["findings"]["gone"].push_back(findingChangeJson(f));
  for (const auto& f : c.changed_findings) document["findings"]["changed"].push_back(findingChangeJson(f));
  for (const auto& change : c.new_problems) document["new_problems"].push_back(changeJson(change));
  for (const auto& change : c.gone_problems) document["gone_problems"].push_back(changeJson(change));
  for (const auto& note : c.notes) document["notes"].push_back(sanitizeUtf8(note));
  return base::dumpJson(document, 2) + "\n";
}

std::string text(const Comparison& c, const RenderOptions& options) {
  const std::string color = c.failed() ? "1;31" : "1;32";
  std::string out = options.color ? fmt::format("\x1b[{}m{}\x1b[0m", color, verdict(c)) : verdict(c);
  out += fmt::format(": {} vs {} (threshold {:.1f} %)\n", sanitizeUtf8(c.new_path), sanitizeUtf8(c.base_path),
                     c.threshold_percent);
  out += fmt::format("  {}{}\n", stepLine(c), c.step_regression ? "  REGRESSION" : "");
  out += fmt::format("  {}{}\n", compileLine(c), c.compile_regression ? "  REGRESSION" : "");
  for (const auto& change : c.new_problems) {
    out += fmt::format("  new {} at {}: {} ({}x)\n", change.kind, sanitizeUtf8(where(change)), sanitizeUtf8(change.detail), change.count);
  }
  for (const auto& change : c.gone_problems) {
    out += fmt::format("  gone {} at {}: {}\n", change.kind, sanitizeUtf8(where(change)), sanitizeUtf8(change.detail));
  }
  for (const auto& rank : c.ranks) out += "  " + rankLine(c, rank) + "\n";
  for (const auto& [state, f] : findingChanges(c)) {
    const bool gates = state == "new" && f->rankDivergence();
    out += "  " + sanitizeUtf8(findingLine(*f, state)) + (gates ? "  REGRESSION" : "") + "\n";
  }
  for (const auto& note : c.notes) out += "  note: " + sanitizeUtf8(note) + "\n";
  return out;
}

std::string markdown(const Comparison& c) {
  std::string out = fmt::format("## torchscope compare: {}\n\n", c.failed() ? "regression" : "no regression");
  out += "| | Base | New | Change |\n|---|---|---|---|\n";
  out += fmt::format("| Step time (median) | {:.3f} ms | {:.3f} ms | {:+.1f} % (p = {:.3g}){} |\n", c.base_steps.median_s * 1e3,
                     c.new_steps.median_s * 1e3, c.step_change_percent, c.p_value, c.step_regression ? " **regression**" : "");
  out += fmt::format("| Step time (p10-p90) | {:.3f}-{:.3f} ms | {:.3f}-{:.3f} ms | |\n", c.base_steps.p10_s * 1e3,
                     c.base_steps.p90_s * 1e3, c.new_steps.p10_s * 1e3, c.new_steps.p90_s * 1e3);
  out += fmt::format("| Compile time | {:.2f} s | {:.2f} s | {:+.2f} s{} |\n", c.base_compile_s, c.new_compile_s,
                     c.new_compile_s - c.base_compile_s, c.compile_regression ? " **regression**" : "");
  out += fmt::format("\nThreshold {:.1f} %.\n", c.threshold_percent);
  if (!c.new_problems.empty()) {
    out += "\n### New problems\n\n";
    for (const auto& change : c.new_problems) {
      out += fmt::format("- **{}** at {}: {} ({}x)\n", change.kind, escapeMarkdown(where(change)), escapeMarkdown(change.detail),
                         change.count);
    }
  }
  if (!c.gone_problems.empty()) {
    out += "\n### Gone\n\n";
    for (const auto& change : c.gone_problems) {
      out += fmt::format("- {} at {}: {}\n", change.kind, escapeMarkdown(where(change)), escapeMarkdown(change.detail));
    }
  }
  if (!c.ranks.empty()) {
    out += "\n### Ranks\n\n| Rank | Base | New | Change |\n|---|---|---|---|\n";
    for (const auto& rank : c.ranks) {
      const bool slowest = rank.rank == c.new_slowest_rank;
      out += fmt::format("| {}{} | {:.3f} ms | {:.3f} ms | {:+.1f} % |\n", rank.rank, slowest ? " (slowest)" : "",
                         rank.base_steps.median_s * 1e3, rank.new_steps.median_s * 1e3, rank.change_percent);
    }
  }
  const auto findings = findingChanges(c);
  if (!findings.empty()) {
    out += "\n### Findings\n\n";
    for (const auto& [state, f] : findings) out += "- " + escapeMarkdown(findingLine(*f, state)) + "\n";
  }
  for (const auto& note : c.notes) out += "\n> " + escapeMarkdown(note) + "\n";
  return out;
}

std::string junit(const Comparison& c) {
  std::string cases;
  int failures = 0;
  auto add = [&](const std::string& name, bool failed, const std::string& message) {
    cases += fmt::format("    <testcase classname=\"torchscope.compare\" name=\"{}\" time=\"0\">", escapeXml(name));
    if (failed) {
      ++failures;
      cases += fmt::format("<failure message=\"{}\" type=\"regression\">{}</failure>", escapeXml(message), escapeXml(message));
    } else {
      cases += fmt::format("<system-out>{}</system-out>", escapeXml(message));
    }
    cases += "</testcase>\n";
  };
  add("step time", c.step_regression, stepLine(c));
  add("compile time", c.compile_regression, compileLine(c));
  add("no new problems", !c.new_problems.empty(), fmt::format("{} new, {} gone", c.new_problems.size(), c.gone_problems.size()));
  for (const auto& change : c.new_problems) {
    add("new " + change.kind + " at " + where(change), true, change.detail);
  }
  add("no new divergent rank", c.divergence_regression,
      fmt::format("{} new, {} changed, {} gone findings", c.new_findings.size(), c.changed_findings.size(),
                  c.gone_findings.size()));
  const int tests = 4 + static_cast<int>(c.new_problems.size());
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"torchscope compare\" tests=\"{0}\" "
                     "failures=\"{1}\" errors=\"0\">\n  <testsuite name=\"torchscope.compare\" tests=\"{0}\" failures=\"{1}\" "
                     "errors=\"0\" skipped=\"0\">\n{2}  </testsuite>\n</testsuites>\n",
                     tests, failures, cases);
}

std::string sarif(const Comparison& c) {
  nlohmann::json results = nlohmann::json::array();
  auto result = [](std::string rule, std::string message) {
    return nlohmann::json{{"ruleId", std::move(rule)}, {"level", "error"}, {"message", {{"text", sanitizeUtf8(message)}}}};
  };
  if (c.step_regression) results.push_back(result("compare/step-time", stepLine(c)));
  if (c.compile_regression) results.push_back(result("compare/compile-time", compileLine(c)));
  for (const auto& change : c.new_problems) {
    auto entry = result("compare/new-" + change.kind, "new " + change.kind + ": " + change.detail);
    if (!change.file.empty()) {
      nlohmann::json physical = {{"artifactLocation", {{"uri", report::fileUri(change.file)}}}};
      if (change.line >= 1) physical["region"] = {{"startLine", change.line}};
      entry["locations"] = nlohmann::json::array({{{"physicalLocation", physical}}});
    }
    results.push_back(entry);
  }
  for (const auto& f : c.new_findings) {
    if (!f.rankDivergence()) continue;
    auto entry = result("compare/new-divergence", findingLine(f, "new"));
    if (!f.file.empty()) {
      nlohmann::json physical = {{"artifactLocation", {{"uri", report::fileUri(f.file)}}}};
      if (f.line >= 1) physical["region"] = {{"startLine", f.line}};
      entry["locations"] = nlohmann::json::array({{{"physicalLocation", physical}}});
    }
    results.push_back(entry);
  }
  nlohmann::json rules = nlohmann::json::array();
  for (const char* id : {"compare/step-time", "compare/compile-time", "compare/new-graph-break", "compare/new-recompile",
                         "compare/new-sync", "compare/new-divergence"}) {
    rules.push_back({{"id", id}, {"shortDescription", {{"text", std::string("torchscope ") + id}}}});
  }
  nlohmann::json document = {
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
      {"version", "2.1.0"},
      {"runs", nlohmann::json::array({{{"tool", {{"driver", {{"name", "torchscope"}, {"rules", rules}}}}},
                                       {"results", results}}})}};
  return base::dumpJson(document, 2) + "\n";
}

std::string html(const Comparison& c) {
  std::string body = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>torchscope compare</title>"
                     "<style>body{font-family:system-ui,sans-serif;margin:2em}td,th{padding:.2em .8em;text-align:left}"
                     ".fail{color:#c62828}.pass{color:#2e7d32}</style></head><body>\n";
  body += fmt::format("<h1 class=\"{}\">{}</h1>\n<p>{} vs {}</p>\n<ul><li>{}</li><li>{}</li></ul>\n",
                      c.failed() ? "fail" : "pass", verdict(c), escapeXml(c.new_path), escapeXml(c.base_path),
                      escapeXml(stepLine(c)), escapeXml(compileLine(c)));
  for (const auto* list : {&c.new_problems, &c.gone_problems}) {
    if (list->empty()) continue;
    body += list == &c.new_problems ? "<h2>New problems</h2><ul>\n" : "<h2>Gone</h2><ul>\n";
    for (const auto& change : *list) {
      body += fmt::format("<li>{} at <code>{}</code>: {}</li>\n", escapeXml(change.kind), escapeXml(where(change)),
                          escapeXml(change.detail));
    }
    body += "</ul>\n";
  }
  if (!c.ranks.empty()) {
    body += "<h2>Ranks</h2><ul>\n";
    for (const auto& rank : c.ranks) body += "<li>" + escapeXml(rankLine(c, rank)) + "</li>\n";
    body += "</ul>\n";
  }
  const auto findings = findingChanges(c);
  if (!findings.empty()) {
    body += "<h2>Findings</h2><ul>\n";
    for (const auto& [state, f] : findings) body += "<li>" + escapeXml(findingLine(*f, state)) + "</li>\n";
    body += "</ul>\n";
  }
  for (const auto& note : c.notes) body += "<p>" + escapeXml(note) + "</p>\n";
  return body + "</body></html>\n";
}

}  // namespace

std::string renderComparison(const Comparison& comparison, Format format, const RenderOptions& options) {
  switch (format) {
    case Format::kText: return text(report::withReadablePaths(comparison, options), options);
    case Format::kJson: return json(comparison);
    case Format::kMarkdown: return markdown(report::withReadablePaths(comparison, options));
    case Format::kSarif: return sarif(comparison);
    case Format::kJunit: return junit(report::withReadablePaths(comparison, options));
    case Format::kHtml: return html(report::withReadablePaths(comparison, options));
  }
  return {};
}

}  // namespace torchscope::analyzer
