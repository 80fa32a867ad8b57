// The one table of rule ids: every id a finding may carry, its family and the rule family (one file under
// analyzer/src/rules/, or the multi-rank analysis) that reports it. docs/rules.md documents each id under a
// "### `<id>`" heading, in this order; a test holds the two together.
//
// A finding carries a RuleId, made from the table: RuleId("sync/item") does not compile for an id the table lacks.
// Text becomes an id, and an id text, only where findings meet the store and the reports.
#pragma once

#include <compare>
#include <ostream>
#include <span>
#include <string_view>

namespace torchscope::analyzer {

struct RuleInfo {
  std::string_view id;           // "<family>/<cause>"
  std::string_view family;       // the id's part before the slash
  std::string_view reported_by;  // the rule family that reports it: "inference" also reports vision/, ...
};

// Every rule, in the order reports list them (SARIF's rule list).
inline constexpr RuleInfo kRuleTable[] = {
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
    {"inference/transformer-fast-path", "inference", "inference"},
    {"memory/growth", "memory", "memory"},
    {"memory/allocator-churn", "memory", "memory"},
    {"memory/fragmentation", "memory", "memory"},
    {"memory/peak-near-capacity", "memory", "memory"},
    {"ranks/straggler", "ranks", "ranks"},
    {"ranks/divergent-recompile", "ranks", "ranks"},
    {"ranks/divergent-graph-break", "ranks", "ranks"},
    {"ranks/exposed-communication", "ranks", "ranks"},
};

[[nodiscard]] inline std::span<const RuleInfo> ruleTable() { return kRuleTable; }
// The table's entry for `id`, nullptr for an id it does not hold.
[[nodiscard]] constexpr const RuleInfo* findRule(std::string_view id) {
  for (const RuleInfo& rule : kRuleTable) {
    if (rule.id == id) return &rule;
  }
  return nullptr;
}
// Whether `id` has the documented form: a family and a cause of lower-case letters, digits and '-', one '/'
// between them.
[[nodiscard]] bool isRuleIdForm(std::string_view id);

namespace rule_table_detail {
// Called only when a RuleId is made, at compile time, from an id the table lacks: the build fails there.
const RuleInfo* notInTheRuleTable();
}  // namespace rule_table_detail

// A rule id. Equal ids are the same table entry; ids order as their text does (reports sort by it).
class RuleId {
 public:
  // An id of the table, checked when compiled: RuleId("sync/item").
  consteval RuleId(const char* id)  // NOLINT: implicit, so that a literal id reads as one
      : info_(findRule(id) != nullptr ? findRule(id) : rule_table_detail::notInTheRuleTable()) {}
  // The id of a finding that has none yet (a default-made Finding): empty text, in no family.
  constexpr RuleId() = default;

  // The id a stored finding names: the table's for text it holds; for text it lacks (a store written by another
  // version of torchscope, or by hand) an id that only keeps the text, listed() false. Such texts are kept for the
  // life of the process, once each.
  [[nodiscard]] static RuleId fromText(std::string_view text);

  [[nodiscard]] constexpr std::string_view text() const { return info_ == nullptr ? std::string_view() : info_->id; }
  [[nodiscard]] constexpr std::string_view family() const {
    return info_ == nullptr ? std::string_view() : info_->family;
  }
  // Whether the id is an entry of this build's rule table.
  [[nodiscard]] bool listed() const;

  friend constexpr bool operator==(RuleId a, RuleId b) { return a.info_ == b.info_; }
  friend constexpr std::strong_ordering operator<=>(RuleId a, RuleId b) { return a.text() <=> b.text(); }
  friend std::ostream& operator<<(std::ostream& out, RuleId id) { return out << id.text(); }

 private:
  explicit constexpr RuleId(const RuleInfo* info) : info_(info) {}
  const RuleInfo* info_ = nullptr;
};

}  // namespace torchscope::analyzer
