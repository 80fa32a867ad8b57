// The CI gate, tested both ways: a slower run or a new problem fails, the reverse passes.
#include <nlohmann/json.hpp>

#include "TestSupport.h"
#include "torchscope/analyzer/Compare.h"

namespace torchscope::analyzer::testing {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

// A run of 30 steps of about `step_ms` (jittered by +-1 %), optionally with a graph break at model.py:20.
std::string runStore(const TempDir& dir, const std::string& name, double step_ms, bool graph_break) {
  nlohmann::json steps = nlohmann::json::array();
  std::int64_t t = kSecond;
  for (int i = 0; i < 30; ++i) {
    const auto length = static_cast<std::int64_t>(step_ms * 1e6 * (1.0 + 0.01 * ((i * 7) % 5 - 2) / 2.0));
    steps.push_back({{"index", i}, {"start_ns", t}, {"end_ns", t + length}, {"source", "optimizer"}});
    t += length;
  }
  nlohmann::json fixture = {{"run", {{"start_ns", kSecond}, {"end_ns", t}}}, {"steps", steps}};
  if (graph_break) {
    fixture["graph_breaks"] = {{{"ts_ns", kSecond}, {"break_type", "Data-dependent branching"}, {"reason", "x"},
                                {"file", "model.py"}, {"line", 20}, {"function", "forward"}}};
  }
  const std::string store = dir.file(name + ".db");
  EXPECT_EQ(buildStore(fixture, store), "");
  return store;
}

Comparison compare(const std::string& base, const std::string& candidate, double threshold = 5) {
  auto result = compareStores(base, candidate, {.threshold_percent = threshold});
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
  return *result;
}

TEST(Compare, SameRunPasses) {
  TempDir dir;
  const auto base = runStore(dir, "base", 10, false);
  const auto same = runStore(dir, "same", 10, false);
  const Comparison result = compare(base, same);
  EXPECT_FALSE(result.failed());
  EXPECT_NEAR(result.step_change_percent, 0, 1e-9);
}

TEST(Compare, SlowerRunFailsAndTheReversePasses) {
  TempDir dir;
  const auto base = runStore(dir, "base", 10, false);
  const auto slow = runStore(dir, "slow", 12, false);
  const Comparison worse = compare(base, slow);
  EXPECT_TRUE(worse.step_regression);
  EXPECT_TRUE(worse.failed());
  EXPECT_NEAR(worse.step_change_percent, 20, 0.5);
  EXPECT_LT(worse.p_value, 0.001);
  const Comparison better = compare(slow, base);
  EXPECT_FALSE(better.failed());
  EXPECT_LT(better.step_change_percent, 0);
}

TEST(Compare, ChangeBelowThresholdPasses) {
  TempDir dir;
  const auto base = runStore(dir, "base", 10, false);
  const auto slightly = runStore(dir, "slightly", 10.3, false);
  EXPECT_FALSE(compare(base, slightly).failed());
  EXPECT_TRUE(compare(base, slightly, 1).failed());
}

TEST(Compare, NewGraphBreakFailsAndAGoneOnePasses) {
  TempDir dir;
  const auto clean = runStore(dir, "clean", 10, false);
  const auto broken = runStore(dir, "broken", 10, true);
  const Comparison added = compare(clean, broken);
  EXPECT_TRUE(added.failed());
  ASSERT_EQ(added.new_problems.size(), 1u);
  EXPECT_EQ(added.new_problems[0].kind, "graph-break");
  EXPECT_EQ(added.new_problems[0].line, 20);
  const Comparison removed = compare(broken, clean);
  EXPECT_FALSE(removed.failed());
  EXPECT_EQ(removed.gone_problems.size(), 1u);
}

TEST(Compare, RendersEveryFormat) {
  TempDir dir;
  const Comparison result = compare(runStore(dir, "base", 10, false), runStore(dir, "broken", 12, true));
  const auto json = nlohmann::json::parse(renderComparison(result, Format::kJson));
  EXPECT_EQ(json["failed"], true);
  EXPECT_EQ(json["step_time"]["regression"], true);
  EXPECT_EQ(json["new_problems"].size(), 1u);
  const auto sarif = nlohmann::json::parse(renderComparison(result, Format::kSarif));
  EXPECT_EQ(sarif["version"], "2.1.0");
  EXPECT_EQ(sarif["runs"][0]["results"].size(), 2u);
  EXPECT_NE(renderComparison(result, Format::kJunit).find("<failure"), std::string::npos);
  EXPECT_NE(renderComparison(result, Format::kMarkdown).find("regression"), std::string::npos);
  EXPECT_NE(renderComparison(result, Format::kText).find("FAIL"), std::string::npos);
  EXPECT_NE(renderComparison(result, Format::kHtml).find("New problems"), std::string::npos);
}

TEST(Compare, UnreadableStoreIsAnError) {
  TempDir dir;
  EXPECT_FALSE(compareStores(dir.file("nope.db"), runStore(dir, "base", 10, false)).ok());
}

}  // namespace
}  // namespace torchscope::analyzer::testing
