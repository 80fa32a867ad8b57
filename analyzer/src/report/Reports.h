// Renderers of the report formats and the escaping they share.
#pragma once

#include "torchscope/analyzer/Escape.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Compare.h"
#include "torchscope/analyzer/LineTable.h"
#include "torchscope/analyzer/Report.h"

namespace torchscope::analyzer::report {

using analyzer::escapeMarkdown;
using analyzer::escapeXml;
using analyzer::sanitizeUtf8;

// The analysis, or a comparison (paths under the current directory only), with its paths as RenderOptions asks for
// the reports people read (ReadablePaths.cpp).
Analysis withReadablePaths(const Analysis& analysis, const RenderOptions& options);
Comparison withReadablePaths(const Comparison& comparison, const RenderOptions& options);

std::string text(const Analysis& analysis, const RenderOptions& options);
std::string json(const Analysis& analysis);
std::string markdown(const Analysis& analysis);
std::string sarif(const Analysis& analysis);
std::string junit(const Analysis& analysis);
std::string html(const Analysis& analysis);

// The JSON object of one finding, the contract of docs/rules.md.
nlohmann::json findingJson(const Finding& finding);
nlohmann::json runJson(const RunSummary& run);
// The line table's sections (LinesReport.cpp); "" for a run without samples.
nlohmann::json linesJson(const LineTable& table);
// `run`: the store's name, "" when the report covers one run.
std::string linesText(const LineTable& table, const std::string& run);
std::string linesMarkdown(const LineTable& table, const std::string& run);
// The requests' section of an inference job (RequestsReport.cpp); "" for a run whose steps are not requests.
nlohmann::json requestsJson(const RequestSummary& requests);
std::string requestsText(const RequestSummary& requests);
std::string requestsMarkdown(const RequestSummary& requests, const std::string& run);
std::string requestsHtml(const RequestSummary& requests);
// The HTML report's flame graph of one run (FlameReport.cpp); "" for a run without samples.
std::string flameChart(const FlameGraph& graph);
// The multi-rank section (RanksReport.cpp): the JSON `ranks` object and the text table.
nlohmann::json ranksJson(const RankAnalysis& ranks);
std::string ranksText(const RankAnalysis& ranks);

// A path as a SARIF artifact URI: relative paths stay relative, absolute ones become file:// URIs.
std::string fileUri(std::string_view path);

std::string location(const Finding& finding);  // "file:line (function)" or ""

// The HTML report's timeline overview of one run (HtmlOverview.cpp); the bar of finding i (0-based) of run r has the
// id placeId(r, i) and links to the finding, whose element id is "finding-<i+1>".
std::string overviewChart(const RunSummary& run, std::size_t run_index, const std::vector<Finding>& findings);
std::string placeId(std::size_t run_index, std::size_t finding_index);
bool hasPlace(const RunSummary& run, const Finding& finding);

// One sentence on where the run's time went, from the findings' own figures (Headline.cpp).
std::string headline(const Analysis& analysis);

// One line of a run's memory summary: what (host RSS, a GPU's allocated or reserved bytes), its peak,
// its value at the last step end and its growth per steady-state step, as text ("-" unknown).
struct MemoryRow {
  std::string what;
  std::string peak;
  std::string last_step;
  std::string growth;
};
[[nodiscard]] std::vector<MemoryRow> memoryRows(const MemorySummary& memory);

}  // namespace torchscope::analyzer::report
