// docs/rules.md must document every rule id the engine reports and every fix id of the catalogue.
#include <fstream>
#include <sstream>

#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/FixIds.h"

namespace torchscope::analyzer::testing {
namespace {

std::string rulesDoc() {
  std::ifstream in(sourcePath("docs/rules.md"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RulesDoc, DocumentsEveryRuleId) {
  const std::string doc = rulesDoc();
  ASSERT_FALSE(doc.empty()) << "docs/rules.md is missing";
  for (const auto& id : ruleIds()) EXPECT_NE(doc.find("### `" + id + "`"), std::string::npos) << id;
}

TEST(RulesDoc, DocumentsEveryFixId) {
  const std::string doc = rulesDoc();
  for (std::string_view id : fix::kAll) EXPECT_NE(doc.find("| `" + std::string(id) + "` |"), std::string::npos) << id;
}

TEST(RulesDoc, RuleIdsAreFamilySlashCause) {
  for (const auto& id : ruleIds()) {
    const auto slash = id.find('/');
    ASSERT_NE(slash, std::string::npos) << id;
    EXPECT_GT(slash, 0u);
    EXPECT_LT(slash + 1, id.size());
  }
}

}  // namespace
}  // namespace torchscope::analyzer::testing
