// Format dispatch and the JSON report (the contract other tools read; schema in docs/rules.md).
#include "torchscope/analyzer/Report.h"

#include "Reports.h"
#include "torchscope/base/JsonText.h"

namespace torchscope::analyzer {

std::optional<Format> parseFormat(std::string_view name) {
  if (name == "text") return Format::kText;
  if (name == "json") return Format::kJson;
  if (name == "markdown") return Format::kMarkdown;
  if (name == "sarif") return Format::kSarif;
  if (name == "junit") return Format::kJunit;
  if (name == "html") return Format::kHtml;
  return std::nullopt;
}

std::string render(const Analysis& analysis, Format format, const RenderOptions& options) {
  switch (format) {
    case Format::kText: return report::text(report::withReadablePaths(analysis, options), options);
    case Format::kJson: return report::json(analysis);
    case Format::kMarkdown: return report::markdown(report::withReadablePaths(analysis, options));
    case Format::kSarif: return report::sarif(analysis);
    case Format::kJunit: return report::junit(report::withReadablePaths(analysis, options));
    case Format::kHtml: return report::html(report::withReadablePaths(analysis, options));
  }
  return {};
}

namespace report {

nlohmann::json findingJson(const Finding& finding) {
  return {
      {"rule", finding.rule.text()},
      {"severity", severityName(finding.severity)},
      {"title", sanitizeUtf8(finding.title)},
      {"message", sanitizeUtf8(finding.message)},
      {"location",
       {{"file", sanitizeUtf8(finding.file)},
        {"line", finding.line >= 0 ? nlohmann::json(finding.line) : nlohmann::json(nullptr)},
        {"function", sanitizeUtf8(finding.function)}}},
      {"count", finding.count},
      {"impact", {{"seconds", finding.impact_seconds}, {"fraction", finding.impact_fraction}}},
      {"evidence", finding.evidence},
      {"fix", {{"id", finding.fix_id}, {"summary", sanitizeUtf8(finding.fix_summary)}, {"kind", finding.fix_kind}}},
  };
}

nlohmann::json memoryJson(const MemorySummary& memory) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& gpu : memory.devices) {
    devices.push_back({{"device", gpu.device},
                       {"peak_allocated_bytes", gpu.peak_allocated_bytes},
                       {"peak_reserved_bytes", gpu.peak_reserved_bytes},
                       {"last_step_allocated_bytes", gpu.last_step_allocated_bytes},
                       {"last_step_reserved_bytes", gpu.last_step_reserved_bytes},
                       {"allocated_growth_bytes_per_step", gpu.allocated_growth_bytes_per_step}});
  }
  return {{"peak_rss_bytes", memory.peak_rss_bytes},
          {"peak_rss_step", memory.peak_rss_step},
          {"last_step_rss_bytes", memory.last_step_rss_bytes},
          {"rss_growth_bytes_per_step", memory.rss_growth_bytes_per_step},
          {"devices", devices}};
}

nlohmann::json runJson(const RunSummary& run) {
  nlohmann::json out = {
      {"path", sanitizeUtf8(run.path)},
      {"command_line", sanitizeUtf8(run.run.command_line)},
      {"host", sanitizeUtf8(run.run.host)},
      {"gpu_name", sanitizeUtf8(run.run.gpu_name)},
      {"torch_version", sanitizeUtf8(run.run.torch_version)},
      {"partial", run.partial},
      {"duration_seconds", run.duration_s},
      {"steps", run.step_seconds.size()},
      {"steady_step_median_seconds", run.steady_step_median_s},
      {"compile_seconds", run.compile_seconds},
      {"compiles", run.compiles},
      {"graph_breaks", run.graph_breaks},
      {"recompiles", run.recompiles},
      {"syncs", run.syncs},
  };
  // Only stores with memory figures have the key, so older reports keep their exact shape.
  if (run.memory.recorded) out["memory"] = memoryJson(run.memory);
  // Likewise the line table: only stores with stack samples.
  if (run.lines.recorded) out["lines"] = linesJson(run.lines);
  // Likewise the requests: only an inference job's store.
  if (run.requests.recorded) out["requests"] = requestsJson(run.requests);
  // Likewise the capture window: the store's row (docs/FORMAT.md) and the reports' sentence.
  if (!run.window.whole()) {
    nlohmann::json window = windowJson(run.window);
    window["description"] = run.window.describe();
    out["window"] = std::move(window);
  }
  return out;
}

std::string json(const Analysis& analysis) {
  nlohmann::json document = {{"schema", kJsonSchema}, {"runs", nlohmann::json::array()},
                             {"notes", nlohmann::json::array()}, {"findings", nlohmann::json::array()}};
  for (const auto& run : analysis.runs) document["runs"].push_back(runJson(run));
  for (const auto& note : analysis.notes) document["notes"].push_back(sanitizeUtf8(note));
  for (const auto& finding : analysis.findings) document["findings"].push_back(findingJson(finding));
  if (!analysis.ranks.empty()) document["ranks"] = ranksJson(analysis.ranks);
  return base::dumpJson(document, 2) + "\n";
}

}  // namespace report

}  // namespace torchscope::analyzer
