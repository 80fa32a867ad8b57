// Golden tests: fixture JSON -> store -> rules -> findings JSON, compared with golden/<fixture>.json.
// TORCHSCOPE_UPDATE_GOLDEN=1 rewrites the expected files.
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>

#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Report.h"

namespace torchscope::analyzer::testing {
namespace {

nlohmann::json findingsOf(const std::string& store) {
  auto analysis = analyze({store});
  EXPECT_TRUE(analysis.ok()) << (analysis.ok() ? "" : analysis.error().message);
  if (!analysis.ok()) return nullptr;
  return nlohmann::json::parse(render(*analysis, Format::kJson))["findings"];
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, FindingsMatchExpectedFile) {
  TempDir dir;
  const std::string name = GetParam();
  const nlohmann::json findings = findingsOf(fixtureStore(dir, name));
  expectMatchesGolden(findings, goldenDir() / (name + ".json"));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Golden, ::testing::ValuesIn(fixtureNames()),
                         [](const auto& param_info) { return param_info.param; });

std::set<std::string> rulesIn(const std::string& name) {
  std::ifstream in(goldenDir() / (name + ".json"));
  std::set<std::string> rules;
  if (!in) return rules;
  for (const auto& finding : nlohmann::json::parse(in)) rules.insert(finding["rule"].get<std::string>());
  return rules;
}

TEST(GoldenCoverage, EveryRuleHasAGoldenCase) {
  std::set<std::string> covered;
  for (const auto& name : fixtureNames()) {
    const auto rules = rulesIn(name);
    covered.insert(rules.begin(), rules.end());
  }
  for (const auto& id : ruleIds()) {
    // The multi-rank rules need a folder of stores, not one fixture: RanksTest.cpp checks them.
    if (id.rfind("ranks/", 0) == 0) continue;
    // compile/does-not-pay needs a second store (the eager run): RegionsTest.cpp has its golden.
    if (id == "compile/does-not-pay") continue;
    EXPECT_TRUE(covered.count(id)) << id << " has no golden case";
  }
}

TEST(GoldenNegative, HealthyRunsHaveNoFindings) {
  for (const char* name : {"clean", "final_sync", "partial"}) {
    TempDir dir;
    const auto findings = findingsOf(fixtureStore(dir, name));
    EXPECT_TRUE(findings.empty()) << name << ": " << findings.dump(2);
  }
}

TEST(GoldenNegative, NeverCompiledJobGetsNoCompileFindings) {
  TempDir dir;
  for (const auto& finding : findingsOf(fixtureStore(dir, "never_compiled"))) {
    const auto rule = finding["rule"].get<std::string>();
    EXPECT_NE(rule.rfind("compile/time", 0), 0u) << rule;
    EXPECT_NE(rule.rfind("recompile/", 0), 0u) << rule;
    EXPECT_NE(rule.rfind("graph-break/", 0), 0u) << rule;
  }
}

TEST(GoldenNegative, LaunchBoundRunWithManyShapesSaysWhyNotCudaGraphs) {
  TempDir dir;
  bool seen = false;
  for (const auto& finding : findingsOf(fixtureStore(dir, "gpu_launch_many_shapes"))) {
    if (finding["rule"] != "gpu/launch-bound") continue;
    seen = true;
    EXPECT_EQ(finding["evidence"]["cuda_graphs_advised"], false);
    EXPECT_NE(finding["fix"]["id"], "cuda-graphs");
    EXPECT_NE(finding["fix"]["id"], "compile-mode");
    EXPECT_NE(finding["message"].get<std::string>().find("not advised"), std::string::npos);
  }
  EXPECT_TRUE(seen);
}

TEST(Partial, CrashedRunIsAnalysedWithANote) {
  TempDir dir;
  auto analysis = analyze({fixtureStore(dir, "partial")});
  ASSERT_TRUE(analysis.ok());
  ASSERT_EQ(analysis->runs.size(), 1u);
  EXPECT_TRUE(analysis->runs[0].partial);
  ASSERT_FALSE(analysis->notes.empty());
  EXPECT_NE(analysis->notes[0].find("partial"), std::string::npos);
}

TEST(MultiProcess, SameFindingInTwoStoresIsMerged) {
  TempDir dir;
  const std::string first = fixtureStore(dir, "syncs");
  const std::string second = dir.file("rank1.db");
  std::filesystem::copy_file(first, second);
  auto one = analyze({first});
  auto both = analyze({first, second});
  ASSERT_TRUE(one.ok() && both.ok());
  ASSERT_EQ(one->findings.size(), both->findings.size());
  EXPECT_EQ(both->runs.size(), 2u);
  EXPECT_EQ(both->findings[0].count, 2 * one->findings[0].count);
  EXPECT_DOUBLE_EQ(both->findings[0].impact_seconds, 2 * one->findings[0].impact_seconds);
}

}  // namespace
}  // namespace torchscope::analyzer::testing
