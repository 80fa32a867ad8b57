// A store with values at the int64 edges in every table (times at INT64_MIN and INT64_MAX, spans that end before
// they start, counts and bytes at the edges, a world of INT64_MAX ranks, text that is not UTF-8): every rule runs,
// every report renders, and nothing overflows, hangs or allocates per declared rank. Under the asan preset UBSan
// ends the test on any signed overflow or out-of-range conversion (store_reader_fuzz found them first).
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Compare.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/testing/ExtremeStore.h"

namespace torchscope::analyzer::testing {
namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::string extremeStore(const TempDir& dir, const std::string& name = "extreme.db") {
  const std::string store = dir.file(name);
  EXPECT_EQ(torchscope::testing::writeExtremeValuesStore(store), "");
  return store;
}

bool finiteAndNonNegative(double value) { return std::isfinite(value) && value >= 0; }

TEST(ExtremeValues, EveryRuleRunsOnInt64EdgeTimesAndEveryFigureStaysFinite) {
  TempDir dir;
  const std::string store = extremeStore(dir);
  AnalyzeOptions options;
  options.timeline_buckets = 16;
  auto analysis = analyze({store}, options);
  ASSERT_TRUE(analysis.ok()) << analysis.error().message;
  for (const auto& note : analysis->notes) EXPECT_EQ(note.find("could not run"), std::string::npos) << note;
  ASSERT_EQ(analysis->runs.size(), 1u);
  const RunSummary& run = analysis->runs.front();
  EXPECT_TRUE(finiteAndNonNegative(run.duration_s));
  EXPECT_GT(run.duration_s, 9e9);  // INT64_MIN to INT64_MAX, clamped: about 292 years
  EXPECT_FALSE(run.step_seconds.empty());
  for (const double seconds : run.step_seconds) EXPECT_TRUE(finiteAndNonNegative(seconds));
  EXPECT_TRUE(finiteAndNonNegative(run.compile_seconds));
  ASSERT_EQ(run.timeline.size(), 16u);
  for (const auto& bucket : run.timeline) {
    EXPECT_TRUE(finiteAndNonNegative(bucket.gpu_busy_s));
    EXPECT_TRUE(finiteAndNonNegative(bucket.cpu_op_s));
    EXPECT_TRUE(finiteAndNonNegative(bucket.sync_s));
  }

  // The rule families that read times, counts and bytes found something to say about them.
  std::set<std::string> families;
  for (const auto& finding : analysis->findings) {
    families.insert(std::string(finding.rule.family()));
    EXPECT_TRUE(finiteAndNonNegative(finding.impact_seconds)) << finding.rule;
    EXPECT_GE(finding.impact_fraction, 0) << finding.rule;
    EXPECT_LE(finding.impact_fraction, 1) << finding.rule;
    EXPECT_GE(finding.count, 0) << finding.rule;
    EXPECT_FALSE(nlohmann::json::parse(findingRecord(finding).evidence, nullptr, false).is_discarded()) << finding.rule;
  }
  for (const char* family : {"sync", "memcpy", "gpu", "compile", "graph-break", "recompile", "memory"}) {
    EXPECT_TRUE(families.count(family)) << family;
  }
}

// Rank 0 of a world of INT64_MAX ranks: the missing ranks are one range, found without walking the world.
TEST(ExtremeValues, AWorldOfInt64MaxRanksIsNamedAsARangeWithoutWalkingIt) {
  TempDir dir;
  auto analysis = analyze({extremeStore(dir)});
  ASSERT_TRUE(analysis.ok()) << analysis.error().message;
  EXPECT_EQ(analysis->ranks.world_size, std::numeric_limits<std::int64_t>::max());
  ASSERT_EQ(analysis->ranks.partial_reasons.size(), 1u);
  EXPECT_EQ(analysis->ranks.partial_reasons[0],
            "ranks 1 to 9223372036854775806 of the world of 9223372036854775807 left no store");
}

TEST(ExtremeValues, EveryReportFormatRendersAndTheJsonOnesParse) {
  TempDir dir;
  AnalyzeOptions options;
  options.timeline_buckets = 16;
  auto analysis = analyze({extremeStore(dir)}, options);
  ASSERT_TRUE(analysis.ok()) << analysis.error().message;
  for (const auto format : {Format::kText, Format::kJson, Format::kMarkdown, Format::kSarif, Format::kJunit,
                            Format::kHtml}) {
    EXPECT_FALSE(render(*analysis, format).empty());
  }
  const std::string json = render(*analysis, Format::kJson);
  EXPECT_FALSE(nlohmann::json::parse(json, nullptr, false).is_discarded());
  EXPECT_NE(json.find(kReplacement), std::string::npos);  // the command line's bytes that are not UTF-8
  EXPECT_FALSE(nlohmann::json::parse(render(*analysis, Format::kSarif), nullptr, false).is_discarded());
}

// `compare` of two such stores: step statistics and the multi-rank comparison over clamped figures.
TEST(ExtremeValues, ComparingTwoSuchStoresRendersEveryFormat) {
  TempDir dir;
  auto comparison = compareStores(extremeStore(dir, "base.db"), extremeStore(dir, "new.db"));
  ASSERT_TRUE(comparison.ok()) << comparison.error().message;
  for (const auto format : {Format::kText, Format::kJson, Format::kMarkdown, Format::kSarif, Format::kJunit,
                            Format::kHtml}) {
    EXPECT_FALSE(renderComparison(*comparison, format).empty());
  }
  EXPECT_FALSE(nlohmann::json::parse(renderComparison(*comparison, Format::kJson), nullptr, false).is_discarded());
}

}  // namespace
}  // namespace torchscope::analyzer::testing
