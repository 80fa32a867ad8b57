// A finding as the analyzer makes and reads it: a severity, a rule id from the rule table (RuleTable.h), the
// recompile cause as the classifier's enum and the evidence as a JSON object. It becomes a store row
// (store::Finding, docs/FORMAT.md) only when saved, and a row read back becomes one again in one place:
// findingFromRecord, the only code that parses stored evidence text.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchscope/analyzer/RuleTable.h"
#include "torchscope/base/Result.h"
#include "torchscope/store/Classify.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/Records.h"

namespace torchscope::analyzer {

// In order of rank: an error before a warning before an info at the same impact.
enum class Severity { kError, kWarning, kInfo };

// "error", "warning", "info": the text reports and stores use.
[[nodiscard]] std::string_view severityName(Severity severity);
// The severity a stored or reported text names; nullopt for any other text.
[[nodiscard]] std::optional<Severity> parseSeverity(std::string_view text);

struct Finding {
  RuleId rule;  // an id of the rule table, "<family>/<cause>"
  Severity severity = Severity::kInfo;
  // recompile/*: the cause the classifier gave the recompiles (recompile/limit-hit: theirs); nullopt otherwise.
  std::optional<store::RecompileCauseKind> recompile_cause;
  std::string title;
  std::string message;
  std::string file;
  std::int64_t line = -1;
  std::string function;
  std::int64_t count = 1;
  double impact_seconds = 0;
  double impact_fraction = 0;
  nlohmann::json evidence = nlohmann::json::object();  // per rule, docs/rules.md
  std::string fix_id;
  std::string fix_summary;
  std::string fix_kind;  // "runtime" | "source" | ""
};

// The store's row: the evidence as JSON text (every byte that is not UTF-8 replaced), the severity's name.
[[nodiscard]] store::Finding findingRecord(const Finding& finding);
// A stored row as a finding: its evidence parsed (an empty object when the text is not a JSON object), its
// severity read (info for an unknown one) and, for recompile/*, the cause its evidence names.
[[nodiscard]] Finding findingFromRecord(const store::Finding& record);
// The findings saved in a store, as findings.
[[nodiscard]] Result<std::vector<Finding>> loadFindings(const store::Reader& reader);

}  // namespace torchscope::analyzer
