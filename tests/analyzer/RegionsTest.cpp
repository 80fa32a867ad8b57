// The compiled-region table (`advise --regions`): fixture stores of a compiled job and of the same job with
// compilation off -> the table as text and JSON against goldens, its sums against the run's, compile/does-not-pay.
// TORCHSCOPE_UPDATE_GOLDEN=1 rewrites the expected files.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

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
  expectMatchesTextGolden(renderRegions(*table, Format::kText, options), regionsDir() / "golden.txt");
  auto json = nlohmann::json::parse(withoutFolder(renderRegions(*table, Format::kJson, options), folder));
  expectMatchesGolden(json, regionsDir() / "golden.json");
  expectMatchesTextGolden(renderRegions(*table, Format::kMarkdown, options), regionsDir() / "golden.md");
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
    if (region.steady_calls > 0) {  // per call: the steady-state calls, whose time is its share of those steps
      EXPECT_NEAR(region.wall_per_call_s * static_cast<double>(region.steady_calls),
                  region.steady_share * table->steady_total_s, 1e-12);
    } else if (region.calls > 0) {
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

// The eager fixture's first Block.forward call warms up (45 ms, the others 30 ms): its time per call, and the
// speed-up and calls to pay off made from it, count the 9 calls of the steady-state steps only.
TEST(RegionTable, PerCallTimesLeaveOutTheWarmUpCall) {
  Stores stores;
  auto eager = regionTable(stores.eager);
  ASSERT_TRUE(eager.ok()) << eager.error().message;
  const auto block = std::find_if(eager->regions.begin(), eager->regions.end(),
                                  [](const Region& region) { return region.name == "Block.forward"; });
  ASSERT_NE(block, eager->regions.end());
  EXPECT_EQ(block->calls, 10);
  EXPECT_EQ(block->steady_calls, 9);
  EXPECT_NEAR(block->run_wall_s, 0.045 + 9 * 0.030, 1e-12);  // every call that compiled nothing, warm-up included
  EXPECT_NEAR(block->wall_per_call_s, 0.030, 1e-12);
  EXPECT_NEAR(block->cpu_per_call_s, 0.030, 1e-12);

  auto compared = regionTable(stores.compiled, stores.eager);
  ASSERT_TRUE(compared.ok());
  const auto compiled = std::find_if(compared->regions.begin(), compared->regions.end(),
                                     [](const Region& region) { return region.name == "Block.forward"; });
  ASSERT_NE(compiled, compared->regions.end());
  EXPECT_NEAR(compiled->eager_wall_per_call_s, 0.030, 1e-12);
  EXPECT_NEAR(compiled->speedup, 3.0, 1e-9);
  EXPECT_NEAR(compiled->payoff_calls, compiled->compile_s / (0.030 - 0.010), 1e-6);
}

// Block.forward repays its 4.90 s after 245 calls of 20 ms saved each: this run of 10 calls did not make them.
TEST(RegionTable, PaidOffOnlyWhenThisRunMadeTheCalls) {
  Stores stores;
  auto table = regionTable(stores.compiled, stores.eager);
  ASSERT_TRUE(table.ok()) << table.error().message;
  auto block = std::find_if(table->regions.begin(), table->regions.end(),
                            [](const Region& region) { return region.name == "Block.forward"; });
  ASSERT_NE(block, table->regions.end());
  EXPECT_FALSE(block->paidOff());
  EXPECT_EQ(regionPayoffText(*block), "would pay off after 245 calls; this run made 10");
  const std::string text = renderRegions(*table, Format::kText);
  EXPECT_NE(text.find("compile time would pay off after 245 calls; this run made 10"), std::string::npos) << text;
  EXPECT_EQ(text.find("paid off"), std::string::npos) << text;
  block->calls = 300;
  EXPECT_TRUE(block->paidOff());
  EXPECT_EQ(regionPayoffText(*block), "paid off after 245 calls; this run made 300");
  block->payoff_calls = -1;  // not faster compiled
  EXPECT_EQ(regionPayoffText(*block), "");
}

// What the regions saved is told with its sign, the same way by the table, the finding and `torchscope fix`.
TEST(RegionTable, SavedTimeKeepsItsSign) {
  EXPECT_EQ(regionsSavedText(0.88644), "saved 886.44 ms");
  EXPECT_EQ(regionsSavedText(-0.000473), "ran 473.0 us slower");
  EXPECT_EQ(regionsSavedText(0), "saved 0 s");
}

// The CPU time of a region is read on some of its calls: per call over those, beside the same calls' wall time.
TEST(RegionTable, CpuPerCallIsOverTheCallsWhoseCpuWasRead) {
  Stores stores;
  auto table = regionTable(stores.compiled);
  ASSERT_TRUE(table.ok()) << table.error().message;
  for (const auto& region : table->regions) {
    if (region.name == "Block.forward") {  // rows with the calls' wall time around the CPU reads
      EXPECT_EQ(region.cpu_calls, 9);
      EXPECT_NEAR(region.cpu_per_call_s, 0.009, 1e-12);
      EXPECT_NEAR(region.cpu_wall_per_call_s, 0.01001, 1e-12);
      EXPECT_NEAR(region.run_cpu_s, region.run_wall_s * 9.0 / 10.01, 1e-12);
    }
    if (region.name == "squared_error") {  // rows of an older store, without it
      EXPECT_EQ(region.cpu_calls, 9);
      EXPECT_LT(region.cpu_wall_per_call_s, 0);
    }
  }
}

TEST(RegionTable, CompileDoesNotPayIsReportedOnlyWhenMeasured) {
  Stores stores;
  auto alone = analyze({stores.compiled});
  ASSERT_TRUE(alone.ok());
  for (const auto& finding : alone->findings) EXPECT_NE(finding.rule, RuleId("compile/does-not-pay"));

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

// A GPU run (CUPTI records, no GPU needed): region calls on thread 100 each launch kernels; a kernel counts for the
// call whose host interval holds its launch (the first API call of its correlation id) on the launching thread.
TEST(RegionTable, KernelsLaunchedInsideARegionsCallsAreItsGpuTime) {
  const auto call = [](std::int64_t step, std::int64_t start_ms, std::int64_t calls, std::int64_t compile_calls) {
    const std::int64_t start_ns = start_ms * 1'000'000;
    return nlohmann::json{{"pid", 1},
                          {"tid", 100},
                          {"start_ns", start_ns},
                          {"end_ns", start_ns + 10'000'000},
                          {"name", "Model.forward"},
                          {"region", 1},
                          {"step", step},
                          {"calls", calls},
                          {"compile_calls", compile_calls},
                          {"wall_ns", 10'000'000},
                          {"compile_wall_ns", compile_calls > 0 ? 10'000'000 : 0}};
  };
  const auto launch = [](std::int64_t tid, std::int64_t at_ms, std::int64_t correlation) {
    return nlohmann::json{{"pid", 1},
                          {"tid", tid},
                          {"start_ns", at_ms * 1'000'000},
                          {"end_ns", at_ms * 1'000'000 + 5'000},
                          {"name", "cudaLaunchKernel"},
                          {"api", "runtime"},
                          {"correlation_id", correlation}};
  };
  const auto kernel = [](std::int64_t correlation, std::int64_t start_ms, std::int64_t duration_us) {
    return nlohmann::json{{"pid", 1},
                          {"device", 0},
                          {"stream", 7},
                          {"start_ns", start_ms * 1'000'000},
                          {"end_ns", start_ms * 1'000'000 + duration_us * 1'000},
                          {"name", "triton_poi_fused_0"},
                          {"correlation_id", correlation}};
  };
  nlohmann::json fixture = {{"run", {{"command_line", "python train.py"}, {"start_ns", 0}, {"end_ns", 1'000'000'000}}}};
  for (int step = 0; step < 4; ++step) {
    fixture["steps"].push_back({{"pid", 1},
                                {"tid", 100},
                                {"index", step},
                                {"start_ns", step * 100'000'000},
                                {"end_ns", (step + 1) * 100'000'000},
                                {"source", "optimizer"}});
  }
  // Step 0 compiles; steps 1 and 2 call once each (joined); step 3 calls twice in one row (not joined).
  fixture["compiled_regions"] = {call(0, 10, 1, 1), call(1, 110, 1, 0), call(2, 210, 1, 0), call(3, 310, 2, 0)};
  fixture["api_calls"] = {
      launch(100, 12, 1),   // in the compiling call: not counted
      launch(100, 112, 2),  // step 1's call: 300 us
      launch(100, 115, 3),  // step 1's call: 200 us (a driver call of the same launch follows, below)
      launch(100, 116, 3), launch(100, 150, 4),  // between calls: not counted
      launch(101, 212, 5),                       // another thread, inside step 2's interval: not counted
      launch(100, 219, 6),                       // step 2's call: 100 us
      launch(100, 312, 7)                        // the row of two calls: not counted
  };
  fixture["kernels"] = {kernel(1, 13, 1000), kernel(2, 113, 300), kernel(3, 117, 200), kernel(4, 151, 900),
                        kernel(5, 213, 700), kernel(6, 220, 100), kernel(7, 313, 800)};
  TempDir dir;
  const std::string store = dir.file("gpu.db");
  ASSERT_EQ(buildStore(fixture, store), "");
  auto table = regionTable(store);
  ASSERT_TRUE(table.ok()) << table.error().message;
  ASSERT_EQ(table->regions.size(), 1u);
  // 600 us over the two calls of one row each.
  EXPECT_NEAR(table->regions[0].gpu_per_call_s, 300e-6, 1e-12);
  EXPECT_NE(renderRegions(*table, Format::kText).find("7.50 ms wall, 300.0 us GPU per call"), std::string::npos)
      << renderRegions(*table, Format::kText);
  const auto json = nlohmann::json::parse(renderRegions(*table, Format::kJson));
  EXPECT_NEAR(json["regions"][0]["gpu_per_call_seconds"].get<double>(), 300e-6, 1e-12);

  // Without CUPTI records the time stays unknown.
  fixture.erase("kernels");
  fixture.erase("api_calls");
  ASSERT_EQ(buildStore(fixture, store), "");
  auto cpu_only = regionTable(store);
  ASSERT_TRUE(cpu_only.ok());
  EXPECT_EQ(cpu_only->regions[0].gpu_per_call_s, -1);
  EXPECT_TRUE(
      nlohmann::json::parse(renderRegions(*cpu_only, Format::kJson))["regions"][0]["gpu_per_call_seconds"].is_null());
}

}  // namespace
}  // namespace torchscope::analyzer::testing
