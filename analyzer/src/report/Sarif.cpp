// SARIF 2.1.0, for code scanning: one result per finding, on the finding's line.
#include <fmt/format.h>

#include <cstdint>
#include <map>

#include "Reports.h"
#include "torchscope/base/JsonText.h"

namespace torchscope::analyzer::report {

namespace {

std::string_view sarifLevel(Severity severity) { return severity == Severity::kInfo ? "note" : severityName(severity); }

// FNV-1a: stable across builds and platforms, so code scanning can follow a finding between runs.
std::string fingerprint(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", hash);
}

}  // namespace

std::string sarif(const Analysis& analysis) {
  nlohmann::json rules = nlohmann::json::array();
  std::map<std::string_view, std::size_t> rule_index;
  for (const auto& id : ruleIds()) {
    rule_index[id] = rules.size();
    rules.push_back({{"id", id},
                     {"name", id},
                     {"shortDescription", {{"text", "torchscope rule " + id}}},
                     {"helpUri", "https://github.com/torchscope/torchscope/blob/main/docs/rules.md"}});
  }
  nlohmann::json results = nlohmann::json::array();
  for (const auto& finding : analysis.findings) {
    nlohmann::json result = {
        {"ruleId", finding.rule.text()},
        {"level", sarifLevel(finding.severity)},
        {"message", {{"text", sanitizeUtf8(finding.title + ". " + finding.message + " Fix: " + finding.fix_summary)}}},
        {"partialFingerprints",
         {{"torchscopeFinding/v1", fingerprint(std::string(finding.rule.text()) + "|" + finding.file + "|" +
                                               std::to_string(finding.line) + "|" + finding.function)}}},
        {"properties",
         {{"count", finding.count},
          {"impactSeconds", finding.impact_seconds},
          {"impactFraction", finding.impact_fraction},
          {"fix",
           {{"id", finding.fix_id}, {"summary", sanitizeUtf8(finding.fix_summary)}, {"kind", finding.fix_kind}}}}}};
    if (const auto found = rule_index.find(finding.rule.text()); found != rule_index.end())
      result["ruleIndex"] = found->second;
    if (!finding.file.empty()) {
      nlohmann::json physical = {{"artifactLocation", {{"uri", fileUri(finding.file)}}}};
      if (finding.line >= 1) physical["region"] = {{"startLine", finding.line}};
      nlohmann::json where = {{"physicalLocation", physical}};
      if (!finding.function.empty()) {
        where["logicalLocations"] = nlohmann::json::array({{{"name", sanitizeUtf8(finding.function)}, {"kind", "function"}}});
      }
      result["locations"] = nlohmann::json::array({where});
    }
    results.push_back(result);
  }
  nlohmann::json notifications = nlohmann::json::array();
  for (const auto& note : analysis.notes) {
    notifications.push_back({{"level", "note"}, {"message", {{"text", sanitizeUtf8(note)}}}});
  }
  nlohmann::json run = {
      {"tool", {{"driver", {{"name", "torchscope"}, {"informationUri", "https://github.com/torchscope/torchscope"},
                            {"rules", rules}}}}},
      {"results", results},
      {"invocations", nlohmann::json::array({{{"executionSuccessful", true},
                                              {"toolExecutionNotifications", notifications}}})}};
  nlohmann::json document = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
                             {"version", "2.1.0"},
                             {"runs", nlohmann::json::array({run})}};
  return base::dumpJson(document, 2) + "\n";
}

}  // namespace torchscope::analyzer::report
