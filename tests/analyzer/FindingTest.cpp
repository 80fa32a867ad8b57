// The finding as a type: the one rule table (its ids, their form, docs/rules.md's headings), the findings every
// fixture gives against it, and the one place a stored row becomes a finding again.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Finding.h"
#include "torchscope/analyzer/RuleTable.h"
#include "torchscope/base/JsonText.h"
#include "torchscope/store/Classify.h"
#include "torchscope/store/Writer.h"

namespace torchscope::analyzer::testing {
namespace {

TEST(RuleTable, EveryIdHasTheFormItsFamilyAndOneEntry) {
  std::set<std::string_view> seen;
  ASSERT_FALSE(ruleTable().empty());
  for (const RuleInfo& rule : ruleTable()) {
    EXPECT_TRUE(isRuleIdForm(rule.id)) << rule.id;
    EXPECT_EQ(rule.id.substr(0, rule.id.find('/')), rule.family) << rule.id;
    EXPECT_FALSE(rule.reported_by.empty()) << rule.id;
    EXPECT_EQ(findRule(rule.id), &rule) << rule.id;
    EXPECT_TRUE(seen.insert(rule.id).second) << "twice: " << rule.id;
  }
  EXPECT_EQ(findRule("sync/nothing-like-it"), nullptr);
  EXPECT_EQ(ruleIds().size(), ruleTable().size());
}

// A rule id is the table's entry: made from a literal or from a stored text, the same id; ids order as their text.
TEST(RuleId, TheTablesIdsAreOneEachAndOrderAsTheirText) {
  constexpr RuleId item = "sync/item";
  EXPECT_EQ(item.text(), "sync/item");
  EXPECT_EQ(item.family(), "sync");
  EXPECT_TRUE(item.listed());
  EXPECT_EQ(RuleId::fromText("sync/item"), item);
  EXPECT_NE(RuleId::fromText("sync/other"), item);
  EXPECT_LT(RuleId("compile/time"), RuleId("sync/item"));
  EXPECT_LT(RuleId("graph-break/item"), RuleId("graph-break/other"));
  for (const RuleInfo& rule : ruleTable()) {
    const RuleId id = RuleId::fromText(rule.id);
    EXPECT_TRUE(id.listed()) << rule.id;
    EXPECT_EQ(id.text(), rule.id);
    EXPECT_EQ(id.family(), rule.family);
  }
  EXPECT_EQ(RuleId().text(), "");
  EXPECT_FALSE(RuleId().listed());
}

// A stored finding may name a rule this build does not know (another version's store, a hand-written one): its id
// keeps the text, in its family, and is one id however often it is read.
TEST(RuleId, AnIdTheTableLacksKeepsItsText) {
  const RuleId unlisted = RuleId::fromText("compile/graph-break");
  EXPECT_FALSE(unlisted.listed());
  EXPECT_EQ(unlisted.text(), "compile/graph-break");
  EXPECT_EQ(unlisted.family(), "compile");
  EXPECT_EQ(RuleId::fromText(std::string("compile/") + "graph-break"), unlisted);
  EXPECT_NE(unlisted, RuleId("compile/time"));
  EXPECT_LT(unlisted, RuleId("compile/time"));
  EXPECT_EQ(RuleId::fromText(""), RuleId());
  store::Finding custom;
  custom.rule = "test/custom";
  custom.severity = "warning";
  const Finding finding = findingFromRecord(custom);
  EXPECT_EQ(finding.rule.text(), "test/custom");
  EXPECT_EQ(findingRecord(finding).rule, "test/custom");
}

TEST(RuleTable, TheFormIsFamilySlashCauseInLowerCase) {
  for (const char* id : {"sync/item", "graph-break/data-dependent-branch", "precision/fp32-matmul"}) {
    EXPECT_TRUE(isRuleIdForm(id)) << id;
  }
  for (const char* id : {"", "sync", "/item", "sync/", "Sync/item", "sync/item/more", "sync item/x", "sync/it_em"}) {
    EXPECT_FALSE(isRuleIdForm(id)) << id;
  }
}

// docs/rules.md documents the table: the same ids under "### `<id>`" headings, in the same order.
TEST(RulesDoc, RuleHeadingsAreTheRuleTableInOrder) {
  std::ifstream in(sourcePath("docs/rules.md"));
  ASSERT_TRUE(in) << "docs/rules.md is missing";
  const std::regex heading(R"(^### `([^`]*/[^`]*)`\s*$)");
  std::vector<std::string> documented;
  for (std::string line; std::getline(in, line);) {
    std::smatch match;
    if (std::regex_match(line, match, heading)) documented.push_back(match[1]);
  }
  std::vector<std::string> table;
  for (const RuleInfo& rule : ruleTable()) table.emplace_back(rule.id);
  EXPECT_EQ(documented, table);
}

// Whatever a fixture makes the rules say, its rule is in the table and its fields are typed.
TEST(RuleTable, EveryFixtureFindingNamesARuleOfTheTable) {
  TempDir dir;
  std::set<RuleId> reported;
  for (const auto& name : fixtureNames()) {
    auto analysis = analyze({fixtureStore(dir, name)});
    ASSERT_TRUE(analysis.ok()) << name << ": " << analysis.error().message;
    for (const Finding& finding : analysis->findings) {
      ASSERT_TRUE(finding.rule.listed()) << name << ": " << finding.rule;
      const RuleInfo* rule = findRule(finding.rule.text());
      ASSERT_NE(rule, nullptr) << name << ": " << finding.rule;
      reported.insert(finding.rule);
      EXPECT_TRUE(finding.evidence.is_object()) << name << ": " << finding.rule;
      if (rule->family == "recompile") {
        ASSERT_TRUE(finding.recompile_cause.has_value()) << name << ": " << finding.rule;
        EXPECT_EQ(store::recompileCauseName(*finding.recompile_cause), finding.evidence.at("cause")) << finding.rule;
        if (finding.rule != "recompile/limit-hit") {
          EXPECT_EQ(RuleId::fromText("recompile/" + std::string(store::recompileCauseName(*finding.recompile_cause))),
                    finding.rule);
        }
      } else {
        EXPECT_FALSE(finding.recompile_cause.has_value()) << name << ": " << finding.rule;
      }
    }
  }
  EXPECT_GT(reported.size(), 20u) << "the fixtures exercise most rules";
}

// Saved through the Writer and read back through findingFromRecord, a finding is the same finding.
TEST(FindingRecord, AFindingSavedAndLoadedIsTheSame) {
  TempDir dir;
  const std::string store = fixtureStore(dir, "recompile_causes");
  auto analysis = analyze({store});
  ASSERT_TRUE(analysis.ok());
  ASSERT_FALSE(analysis->findings.empty());
  ASSERT_TRUE(saveFindings(store, analysis->findings).ok());
  auto reader = store::Reader::open(store);
  ASSERT_TRUE(reader.ok());
  auto loaded = loadFindings(**reader);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->size(), analysis->findings.size());
  for (std::size_t i = 0; i < loaded->size(); ++i) {
    const Finding& made = analysis->findings[i];
    const Finding& back = (*loaded)[i];
    EXPECT_EQ(back.rule, made.rule);
    EXPECT_EQ(back.severity, made.severity) << made.rule;
    EXPECT_EQ(back.recompile_cause, made.recompile_cause) << made.rule;
    EXPECT_EQ(back.evidence, made.evidence) << made.rule;
    EXPECT_EQ(back.file, made.file);
    EXPECT_EQ(back.line, made.line);
    EXPECT_EQ(back.count, made.count);
    EXPECT_DOUBLE_EQ(back.impact_seconds, made.impact_seconds);
    EXPECT_EQ(back.fix_id, made.fix_id);
    EXPECT_EQ(back.fix_kind, made.fix_kind);
    // The row is the text every earlier version wrote: the severity's name, the evidence as one line of JSON.
    const store::Finding row = findingRecord(made);
    EXPECT_EQ(row.severity, severityName(made.severity));
    EXPECT_EQ(row.evidence, base::dumpJson(made.evidence));
    EXPECT_EQ(findingRecord(back), row) << made.rule;
  }
}

store::Finding row(std::string rule, std::string severity, std::string evidence) {
  store::Finding record;
  record.rule = std::move(rule);
  record.severity = std::move(severity);
  record.line = 4;
  record.evidence = std::move(evidence);
  return record;
}

// A row from a foreign or damaged store still becomes a finding: unknown text reads as info and no evidence.
TEST(FindingRecord, ARowThatIsNotTheAnalyzersReadsAsInfoWithoutEvidence) {
  for (const char* evidence : {"not json", "", "[1, 2]", "{\"cause\": 3"}) {
    const Finding finding = findingFromRecord(row("recompile/other", "fatal", evidence));
    EXPECT_EQ(finding.severity, Severity::kInfo) << evidence;
    EXPECT_EQ(finding.evidence, nlohmann::json::object()) << evidence;
    EXPECT_FALSE(finding.recompile_cause.has_value()) << evidence;
    EXPECT_EQ(finding.line, 4);
  }
  const Finding typed =
      findingFromRecord(row("recompile/dtype-device", "error", R"({"cause": "dtype-device", "ranks": [1]})"));
  EXPECT_EQ(typed.severity, Severity::kError);
  EXPECT_EQ(typed.recompile_cause, store::RecompileCauseKind::kDtypeDevice);
  EXPECT_EQ(typed.evidence.at("ranks"), nlohmann::json::array({1}));
}

TEST(FindingRecord, SeverityAndCauseNamesRoundTrip) {
  for (const Severity severity : {Severity::kError, Severity::kWarning, Severity::kInfo}) {
    EXPECT_EQ(parseSeverity(severityName(severity)), severity);
  }
  EXPECT_FALSE(parseSeverity("Warning").has_value());
  using store::RecompileCauseKind;
  for (const auto cause :
       {RecompileCauseKind::kDynamicShape, RecompileCauseKind::kDtypeDevice, RecompileCauseKind::kGlobalState,
        RecompileCauseKind::kTrainingFlag, RecompileCauseKind::kPythonScalar, RecompileCauseKind::kTypeOrIdentity,
        RecompileCauseKind::kOther}) {
    EXPECT_EQ(store::parseRecompileCause(store::recompileCauseName(cause)), cause);
    EXPECT_TRUE(RuleId::fromText("recompile/" + std::string(store::recompileCauseName(cause))).listed());
  }
  EXPECT_EQ(store::parseRecompileCause(store::classifyRecompile("tensor 'L['x']' size mismatch at index 0")),
            RecompileCauseKind::kDynamicShape);
  EXPECT_FALSE(store::parseRecompileCause("limit-hit").has_value());
}

// Saving replaces the findings through the Writer and leaves every other table as it was.
TEST(FindingRecord, SavingReplacesOnlyTheFindings) {
  TempDir dir;
  const std::string store = fixtureStore(dir, "syncs");
  auto analysis = analyze({store});
  ASSERT_TRUE(analysis.ok());
  const auto syncs_before = [&] {
    auto reader = store::Reader::open(store);
    return (*reader)->load<store::Sync>()->size();
  }();
  ASSERT_TRUE(saveFindings(store, analysis->findings).ok());
  std::vector<Finding> one(analysis->findings.begin(), analysis->findings.begin() + 1);
  ASSERT_TRUE(saveFindings(store, one).ok());
  auto reader = store::Reader::open(store);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->load<store::Sync>()->size(), syncs_before);
  auto loaded = loadFindings(**reader);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ(loaded->front().rule, one.front().rule);
}

}  // namespace
}  // namespace torchscope::analyzer::testing
