// The one table of rule ids: every id a finding may carry, its family and the rule family (one file under
// analyzer/src/rules/, or the multi-rank analysis) that reports it. docs/rules.md documents each id under a
// "### `<id>`" heading, in this order; a test holds the two together.
#pragma once

#include <span>
#include <string_view>

namespace torchscope::analyzer {

struct RuleInfo {
  std::string_view id;           // "<family>/<cause>"
  std::string_view family;       // the id's part before the slash
  std::string_view reported_by;  // the rule family that reports it: "inference" also reports vision/, ...
};

// Every rule, in the order reports list them (SARIF's rule list).
[[nodiscard]] std::span<const RuleInfo> ruleTable();
// The table's entry for `id`, nullptr for an id it does not hold.
[[nodiscard]] const RuleInfo* findRule(std::string_view id);
// Whether `id` has the documented form: a family and a cause of lower-case letters, digits and '-', one '/'
// between them.
[[nodiscard]] bool isRuleIdForm(std::string_view id);

}  // namespace torchscope::analyzer
