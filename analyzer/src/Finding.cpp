#include "torchscope/analyzer/Finding.h"

#include <map>
#include <mutex>
#include <string>

#include "torchscope/analyzer/RuleTable.h"
#include "torchscope/base/JsonText.h"

namespace torchscope::analyzer {

namespace {

// The ids stored findings name that the table lacks, each kept once: a RuleId points at its entry.
struct UnlistedRules {
  std::mutex mutex;
  std::map<std::string, RuleInfo, std::less<>> infos;  // by its text, which the entry's views point into
};

UnlistedRules& unlistedRules() {
  static UnlistedRules rules;
  return rules;
}

}  // namespace

namespace rule_table_detail {
const RuleInfo* notInTheRuleTable() { return nullptr; }
}  // namespace rule_table_detail

RuleId RuleId::fromText(std::string_view text) {
  if (text.empty()) return RuleId();
  if (const RuleInfo* listed = findRule(text)) return RuleId(listed);
  UnlistedRules& unlisted = unlistedRules();
  const std::lock_guard lock(unlisted.mutex);
  auto [entry, inserted] = unlisted.infos.try_emplace(std::string(text));
  if (inserted) {
    const std::string_view kept = entry->first;
    entry->second = {kept, kept.substr(0, kept.find('/')), ""};
  }
  return RuleId(&entry->second);
}

bool RuleId::listed() const { return info_ != nullptr && findRule(info_->id) == info_; }

bool isRuleIdForm(std::string_view id) {
  const auto slash = id.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == id.size()) return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (c == '/' && i == slash);
    if (!allowed) return false;
  }
  return true;
}

std::string_view severityName(Severity severity) {
  switch (severity) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kInfo: break;
  }
  return "info";
}

std::optional<Severity> parseSeverity(std::string_view text) {
  for (const Severity severity : {Severity::kError, Severity::kWarning, Severity::kInfo}) {
    if (severityName(severity) == text) return severity;
  }
  return std::nullopt;
}

store::Finding findingRecord(const Finding& finding) {
  return {std::string(finding.rule.text()),
          std::string(severityName(finding.severity)),
          finding.title,
          finding.message,
          finding.file,
          finding.line,
          finding.function,
          finding.count,
          finding.impact_seconds,
          finding.impact_fraction,
          base::dumpJson(finding.evidence.is_null() ? nlohmann::json::object() : finding.evidence),
          finding.fix_id,
          finding.fix_summary,
          finding.fix_kind};
}

Finding findingFromRecord(const store::Finding& record) {
  Finding finding;
  finding.rule = RuleId::fromText(record.rule);
  finding.severity = parseSeverity(record.severity).value_or(Severity::kInfo);
  finding.title = record.title;
  finding.message = record.message;
  finding.file = record.file;
  finding.line = record.line;
  finding.function = record.function;
  finding.count = record.count;
  finding.impact_seconds = record.impact_seconds;
  finding.impact_fraction = record.impact_fraction;
  if (auto evidence = base::parseJson(record.evidence); evidence.is_object()) finding.evidence = std::move(evidence);
  if (finding.rule.family() == "recompile") {
    const auto cause = finding.evidence.find("cause");
    if (cause != finding.evidence.end() && cause->is_string()) {
      finding.recompile_cause = store::parseRecompileCause(cause->get<std::string>());
    }
  }
  finding.fix_id = record.fix_id;
  finding.fix_summary = record.fix_summary;
  finding.fix_kind = record.fix_kind;
  return finding;
}

Result<std::vector<Finding>> loadFindings(const store::Reader& reader) {
  auto records = reader.load<store::Finding>();
  if (!records) return records.error();
  std::vector<Finding> findings;
  findings.reserve(records->size());
  for (const auto& record : *records) findings.push_back(findingFromRecord(record));
  return findings;
}

}  // namespace torchscope::analyzer
