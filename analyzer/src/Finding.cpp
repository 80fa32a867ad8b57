#include "torchscope/analyzer/Finding.h"

#include "torchscope/analyzer/RuleTable.h"
#include "torchscope/base/JsonText.h"

namespace torchscope::analyzer {

namespace {

constexpr RuleInfo kRules[] = {
    {"recompile/dynamic-shape", "recompile", "recompile"},
    {"recompile/python-scalar", "recompile", "recompile"},
    {"recompile/dtype-device", "recompile", "recompile"},
    {"recompile/global-state", "recompile", "recompile"},
    {"recompile/training-flag", "recompile", "recompile"},
    {"recompile/type-or-identity", "recompile", "recompile"},
    {"recompile/limit-hit", "recompile", "recompile"},
    {"recompile/other", "recompile", "recompile"},
    {"graph-break/data-dependent-branch", "graph-break", "graph-break"},
    {"graph-break/item", "graph-break", "graph-break"},
    {"graph-break/print", "graph-break", "graph-break"},
    {"graph-break/unsupported-call", "graph-break", "graph-break"},
    {"graph-break/dynamic-output-shape", "graph-break", "graph-break"},
    {"graph-break/eager-fallback", "graph-break", "graph-break"},
    {"graph-break/torch-designed", "graph-break", "graph-break"},
    {"graph-break/other", "graph-break", "graph-break"},
    {"sync/item", "sync", "sync"},
    {"sync/host-copy", "sync", "sync"},
    {"sync/nonzero", "sync", "sync"},
    {"sync/repeat-interleave", "sync", "sync"},
    {"sync/synchronize", "sync", "sync"},
    {"sync/other", "sync", "sync"},
    {"memcpy/pageable", "memcpy", "memcpy"},
    {"gpu/idle", "gpu", "gpu"},
    {"gpu/launch-bound", "gpu", "gpu"},
    {"precision/fp32-matmul", "precision", "precision"},
    {"compile/time", "compile", "compile"},
    {"compile/not-compiled", "compile", "compile"},
    {"compile/does-not-pay", "compile", "compile"},
    {"inference/no-inference-mode", "inference", "inference"},
    {"vision/channels-last", "vision", "inference"},
    {"quantization/candidate", "quantization", "inference"},
    {"attention/manual", "attention", "inference"},
    {"memory/growth", "memory", "memory"},
    {"memory/allocator-churn", "memory", "memory"},
    {"memory/fragmentation", "memory", "memory"},
    {"memory/peak-near-capacity", "memory", "memory"},
    {"ranks/straggler", "ranks", "ranks"},
    {"ranks/divergent-recompile", "ranks", "ranks"},
    {"ranks/divergent-graph-break", "ranks", "ranks"},
    {"ranks/exposed-communication", "ranks", "ranks"},
};

}  // namespace

std::span<const RuleInfo> ruleTable() { return kRules; }

const RuleInfo* findRule(std::string_view id) {
  for (const RuleInfo& rule : kRules) {
    if (rule.id == id) return &rule;
  }
  return nullptr;
}

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
  return {finding.rule,
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
  finding.rule = record.rule;
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
  if (record.rule.starts_with("recompile/")) {
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
