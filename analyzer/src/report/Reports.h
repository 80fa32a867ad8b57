// Renderers of the report formats and the escaping they share.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Report.h"

namespace torchscope::analyzer::report {

std::string text(const Analysis& analysis, const RenderOptions& options);
std::string json(const Analysis& analysis);
std::string markdown(const Analysis& analysis);
std::string sarif(const Analysis& analysis);
std::string junit(const Analysis& analysis);
std::string html(const Analysis& analysis);

// The JSON object of one finding, the contract of docs/rules.md.
nlohmann::json findingJson(const Finding& finding);
nlohmann::json runJson(const RunSummary& run);

// Escaping: every string from a store passes through one of these before it reaches an output.
std::string escapeXml(std::string_view text);  // also HTML: & < > " '
std::string escapeMarkdown(std::string_view text);  // table cells and inline text
// Replaces bytes that are not valid UTF-8 and control characters other than \n and \t.
std::string sanitizeUtf8(std::string_view text);
// A path as a SARIF artifact URI: relative paths stay relative, absolute ones become file:// URIs.
std::string fileUri(std::string_view path);

std::string location(const Finding& finding);  // "file:line (function)" or ""

}  // namespace torchscope::analyzer::report
