// The compiled-region table (`advise --regions`): fixture stores of a compiled job and of the same job with
// compilation off -> the table as text and JSON against goldens, its sums against the run's, compile/does-not-pay.
// TORCHSCOPE_UPDATE_GOLDEN=1 rewrites the expected files.
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Regions.h"
#include "torchscope/analyzer/Report.h"

namespace torchscope::analyzer::testing {
namespace {

std::filesystem::path regionsDir() { return sourcePath("tests/analyzer/regions"); }

std::string regionStore(const TempDir& dir, const std::string& name) {
  const std::string store = dir.file(name + ".db");
  EXPECT_EQ(torchscope::testing::buildStoreFromFile((regionsDir() / (name + ".json")).string(), store), "") << name;
  return store;
}

// The report with the temporary folder's paths replaced, so that it can be compared with a file.
std::string withoutFolder(std::string text, const std::string& folder) {
  for (auto at = text.find(folder); at != std::string::npos; at = text.find(folder, at))
    text.replace(at, folder.size(), "TMP");
  return text;
}

void expectTextMatchesGolden(const std::string& actual, const std::filesystem::path& expected_file) {
  if (std::getenv("TORCHSCOPE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(expected_file) << actual;
    return;
  }
  std::ifstream in(expected_file);
  ASSERT_TRUE(in) << expected_file;
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << expected_file;
}

struct Stores {
  TempDir dir;
  std::string compiled = regionStore(dir, "regions_compiled");
  std::string eager = regionStore(dir, "regions_eager");
};

TEST(RegionTable, TextAndJsonMatchGoldens) {
  Stores stores;
  auto table = regionTable(stores.compiled, stores.eager);
  ASSERT_TRUE(table.ok()) << table.error().message;
  const std::string folder = stores.dir.path().string();
  RenderOptions options;  // text and Markdown show paths under the current directory relative to it
  options.current_directory = folder;
  expectTextMatchesGolden(renderRegions(*table, Format::kText, options), regionsDir() / "golden.txt");
  auto json = nlohmann::json::parse(withoutFolder(renderRegions(*table, Format::kJson, options), folder));
  expectMatchesGolden(json, regionsDir() / "golden.json");
  expectTextMatchesGolden(renderRegions(*table, Format::kMarkdown, options), regionsDir() / "golden.md");
}

TEST(RegionTable, HtmlIsOneSelfContainedTableWithEscapedText) {
  Stores stores;
  auto table = regionTable(stores.compiled, stores.eager);
  ASSERT_TRUE(table.ok());
  table->regions.front().name = "<script>alert(1)</script>";
  const std::string html = renderRegions(*table, Format::kHtml);
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  std::size_t rows = 0;
  for (auto at = html.find("<tr>"); at != std::string::npos; at = html.find("<tr>", at + 1)) ++rows;
  EXPECT_EQ(rows, 1 + table->regions.size());  // the header and one row per region
  EXPECT_NE(html.find("compilation does not pay at this run length"), std::string::npos);
}

TEST(RegionTable, RowsAddUpToTheRunsCompileAndStepTimes) {
  Stores stores;
  auto table = regionTable(stores.compiled);
  ASSERT_TRUE(table.ok()) << table.error().message;
  auto analysis = analyze({stores.compiled});
  ASSERT_TRUE(analysis.ok());
  const RunSummary& run = analysis->runs.front();
  EXPECT_NEAR(table->compile_s, run.compile_seconds, 1e-9);
  double rows_compile = 0;
  double steady_share = 0;
  for (const auto& region : table->regions) {
    rows_compile += region.compile_s;
    if (region.steady_share > 0) steady_share += region.steady_share;
    if (region.calls > 0) {
      EXPECT_NEAR(region.wall_per_call_s * static_cast<double>(region.calls - region.compile_calls), region.run_wall_s,
                  1e-12);
    }
  }
  // The fixture's compilations do not overlap: the rows' compile times add up to the run's.
  EXPECT_NEAR(rows_compile, run.compile_seconds, 1e-9);
  double steady_total = 0;
  for (const double seconds : run.steady_step_seconds) steady_total += seconds;
  EXPECT_NEAR(table->steady_total_s, steady_total, 1e-9);
  EXPECT_EQ(table->steady_steps, static_cast<std::int64_t>(run.steady_step_seconds.size()));
  // Block.forward 10 ms and squared_error 1 ms of each 100 ms steady step.
  EXPECT_NEAR(steady_share, 0.11, 1e-9);
  EXPECT_FALSE(table->compared);  // no eager run: nothing measured
}

TEST(RegionTable, CompileDoesNotPayIsReportedOnlyWhenMeasured) {
  Stores stores;
  auto alone = analyze({stores.compiled});
  ASSERT_TRUE(alone.ok());
  for (const auto& finding : alone->findings) EXPECT_NE(finding.rule, "compile/does-not-pay");

  AnalyzeOptions options;
  options.against = stores.eager;
  auto measured = analyze({stores.compiled}, options);
  ASSERT_TRUE(measured.ok()) << measured.error().message;
  auto findings =
      nlohmann::json::parse(withoutFolder(render(*measured, Format::kJson), stores.dir.path().string()))["findings"];
  nlohmann::json pays = nlohmann::json::array();
  for (const auto& finding : findings) {
    if (finding["rule"] == "compile/does-not-pay") pays.push_back(finding);
  }
  ASSERT_EQ(pays.size(), 1u) << findings.dump(1);
  expectMatchesGolden(pays, regionsDir() / "does_not_pay.json");
}

TEST(RegionTable, AStoreWithoutTimedRegionsListsItsCompiledFrames) {
  TempDir dir;
  const std::string store = dir.file("compile_time.db");
  ASSERT_EQ(torchscope::testing::buildStoreFromFile((fixtureDir() / "compile_time.json").string(), store), "");
  auto table = regionTable(store);
  ASSERT_TRUE(table.ok());
  EXPECT_FALSE(table->compiled_run_measured);
  ASSERT_EQ(table->regions.size(), 1u);  // three frames of one code object
  EXPECT_EQ(table->regions.front().frames.size(), 3u);
  EXPECT_EQ(table->regions.front().calls, -1);
  const auto json = nlohmann::json::parse(renderRegions(*table, Format::kJson));
  EXPECT_TRUE(json["regions"][0]["calls"].is_null());
  EXPECT_EQ(json["regions"].size(), 1u);
}

TEST(RegionTable, AnUnreadableStoreIsAnError) {
  TempDir dir;
  const std::string path = dir.file("not_a_store.db");
  std::ofstream(path) << "plain text";
  EXPECT_FALSE(regionTable(path).ok());
  Stores stores;
  EXPECT_FALSE(regionTable(stores.compiled, path).ok());
}

}  // namespace
}  // namespace torchscope::analyzer::testing
