// The multi-rank analysis over real stores: ranks written through store::Writer (host collectives of DDP buckets,
// NCCL kernels as CUPTI records them), the corpus's per-rank TORCH_TRACE logs imported into a run folder, and the
// merged Chrome export of a folder.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "RankStores.h"
#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/interop/ChromeExport.h"
#include "torchscope/interop/Import.h"
#include "torchscope/store/RunFolder.h"
#include "torchscope/store/Writer.h"

namespace torchscope::analyzer::testing {
namespace {

namespace fs = std::filesystem;

TEST(Ranks, TheRankTheOthersWaitForIsTheStraggler) {
  TempDir dir;
  // Rank 2 computes 35 ms; the others 20 ms and then wait for it: every step lasts 40 ms on every rank.
  std::vector<RankPlan> plans = {{0}, {1}, {2, 35 * kMs}, {3}};
  writeFolder(dir, plans);
  auto stores = store::expandRunFolders({dir.file("")});
  ASSERT_TRUE(stores.ok());
  auto analysis = analyze(*stores);
  ASSERT_TRUE(analysis.ok()) << analysis.error().message;
  const auto& ranks = analysis->ranks;
  ASSERT_EQ(ranks.ranks.size(), 4u);
  EXPECT_EQ(ranks.world_size, 4);
  EXPECT_FALSE(ranks.partial);
  for (const auto& rank : ranks.ranks) {
    const double compute = static_cast<double>(plans[static_cast<std::size_t>(rank.rank)].compute_ns) / 1e9;
    EXPECT_NEAR(rank.step_median_s, 0.040, 1e-9);
    EXPECT_NEAR(rank.compute_median_s, compute, 1e-9) << rank.rank;  // the wait starts at the last bucket's launch
    EXPECT_EQ(rank.collectives, 16);
  }
  ASSERT_EQ(ranks.stragglers.size(), 1u);
  EXPECT_EQ(ranks.stragglers[0].rank, 2);
  EXPECT_NEAR(ranks.stragglers[0].slower_by_s, 0.015, 1e-9);
  EXPECT_NEAR(ranks.stragglers[0].others_wait_s, 0.020, 1e-9);
  EXPECT_EQ(ranks.stragglers[0].steps_slower, 7);  // every step after the first
  const auto straggler = std::find_if(analysis->findings.begin(), analysis->findings.end(),
                                      [](const Finding& f) { return f.rule == "ranks/straggler"; });
  ASSERT_NE(straggler, analysis->findings.end());
  EXPECT_EQ(straggler->function, "rank 2");
}

TEST(Ranks, EvenRanksAreNoStragglersAndTheirWaitIsExposedCommunication) {
  TempDir dir;
  auto stores = writeFolder(dir, {{0}, {1}, {2}});
  auto analysis = analyze(stores);
  ASSERT_TRUE(analysis.ok());
  EXPECT_TRUE(analysis->ranks.stragglers.empty());
  // Each rank waits 20 ms of 40 ms for its last bucket: half the step is exposed communication.
  const auto exposed = std::find_if(analysis->findings.begin(), analysis->findings.end(),
                                    [](const Finding& f) { return f.rule == "ranks/exposed-communication"; });
  ASSERT_NE(exposed, analysis->findings.end());
  EXPECT_NEAR(exposed->evidence.at("exposed_share").get<double>(), 0.5, 1e-9);
}

TEST(Ranks, NcclKernelsWaitForThePartComputeDidNotHide) {
  TempDir dir;
  RankPlan gpu0{0};
  gpu0.nccl = true;
  RankPlan gpu1{1};
  gpu1.nccl = true;
  auto stores = writeFolder(dir, {gpu0, gpu1});
  auto analysis = analyze(stores);
  ASSERT_TRUE(analysis.ok());
  for (const auto& rank : analysis->ranks.ranks) {
    // NCCL over [10, 40) ms of each step, compute over [0, 20): 10 of its 30 ms hidden, 20 ms waited.
    EXPECT_NEAR(rank.overlap_fraction, 10.0 / 30.0, 1e-9);
    EXPECT_NEAR(rank.compute_median_s, 0.020, 1e-9);
    EXPECT_EQ(rank.collectives, 8);
  }
}

TEST(Ranks, AMissingRankMakesTheRunPartial) {
  TempDir dir;
  // A world of 3 of which rank 2 left no store.
  const std::vector<std::string> stores = {dir.file("run.rank0.1.db"), dir.file("run.rank1.1.db")};
  writeRank(stores[0], {0}, 3);
  writeRank(stores[1], {1}, 3);
  auto analysis = analyze(stores);
  ASSERT_TRUE(analysis.ok());
  EXPECT_TRUE(analysis->ranks.partial);
  ASSERT_EQ(analysis->ranks.partial_reasons.size(), 1u);
  EXPECT_NE(analysis->ranks.partial_reasons[0].find("rank 2"), std::string::npos);
}

// The missing ranks come from the gaps between the ranks present, as ranges; a rank outside the world its
// stores declare is not counted as one of the world's.
TEST(Ranks, MissingRanksAreTheGapsBetweenThePresentOnes) {
  TempDir dir;
  const std::vector<std::string> stores = {dir.file("run.rank0.1.db"), dir.file("run.rank5.1.db"),
                                           dir.file("run.rank9.1.db")};
  writeRank(stores[0], {0}, 8);
  writeRank(stores[1], {5}, 8);
  writeRank(stores[2], {9}, 8);
  auto analysis = analyze(stores);
  ASSERT_TRUE(analysis.ok());
  ASSERT_EQ(analysis->ranks.partial_reasons.size(), 1u);
  EXPECT_EQ(analysis->ranks.partial_reasons[0], "ranks 1 to 4, 6 and 7 of the world of 8 left no store");
}

TEST(Ranks, ImportedPerRankTorchTraceLogsNameTheRanksThatRecompiledDifferently) {
  TempDir dir;
  const fs::path logs = corpusPath("torch_trace/multi_rank_logs");
  auto imported = interop::importToRunFolder({logs.string()}, dir.file("run"));
  ASSERT_TRUE(imported.ok()) << imported.error().message;
  auto stores = store::expandRunFolders({dir.file("run")});
  ASSERT_TRUE(stores.ok());
  ASSERT_EQ(stores->size(), 4u);
  for (std::size_t i = 0; i < stores->size(); ++i) {
    EXPECT_EQ(store::rankInStoreName(fs::path((*stores)[i]).filename().string()), static_cast<long long>(i));
  }
  auto analysis = analyze(*stores);
  ASSERT_TRUE(analysis.ok()) << analysis.error().message;
  ASSERT_EQ(analysis->ranks.ranks.size(), 4u);
  // The corpus's README: rank 1 has 14 recompile_reasons artifacts, rank 3 has 6, ranks 0 and 2 none.
  std::int64_t recompiles_1 = 0, recompiles_3 = 0;
  for (const auto& rank : analysis->ranks.ranks) {
    if (rank.rank == 1) recompiles_1 = rank.recompiles;
    if (rank.rank == 3) recompiles_3 = rank.recompiles;
    if (rank.rank == 0 || rank.rank == 2) {
      EXPECT_EQ(rank.recompiles, 0);
    }
  }
  EXPECT_GT(recompiles_1, recompiles_3);
  EXPECT_GT(recompiles_3, 0);
  std::set<std::int64_t> divergent;
  for (const auto& divergence : analysis->ranks.divergences) {
    if (divergence.rule.family() == "recompile") divergent.insert(divergence.ranks.begin(), divergence.ranks.end());
  }
  EXPECT_EQ(divergent, (std::set<std::int64_t>{1, 3}));
  EXPECT_TRUE(std::any_of(analysis->findings.begin(), analysis->findings.end(),
                          [](const Finding& f) { return f.rule == "ranks/divergent-recompile" && !f.file.empty(); }));
}

// fixtures/ranks/<case>.json: the rows every rank has ("common") and each rank's own ("ranks"[r]), written as the
// stores of a run folder (the rank from the file name).
std::vector<std::string> writeRankFixture(const TempDir& dir, const std::string& name) {
  std::ifstream in(fixtureDir() / "ranks" / (name + ".json"));
  const auto fixture = nlohmann::json::parse(in);
  std::vector<std::string> stores;
  for (std::size_t r = 0; r < fixture["ranks"].size(); ++r) {
    nlohmann::json rank = fixture["common"];
    for (const auto& [table, rows] : fixture["ranks"][r].items()) {
      for (const auto& row : rows) rank[table].push_back(row);
    }
    stores.push_back(dir.file("run.rank" + std::to_string(r) + ".1.db"));
    EXPECT_EQ(buildStore(rank, stores.back()), "") << name << " rank " << r;
  }
  return stores;
}

std::vector<std::string> rankFixtureNames() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(fixtureDir() / "ranks")) names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The JSON report's divergences and ranks/* findings of a rank fixture.
nlohmann::json rankReport(const std::string& name) {
  TempDir dir;
  auto analysis = analyze(writeRankFixture(dir, name));
  EXPECT_TRUE(analysis.ok()) << (analysis.ok() ? "" : analysis.error().message);
  if (!analysis.ok()) return nullptr;
  const auto report = nlohmann::json::parse(render(*analysis, Format::kJson));
  nlohmann::json result = {{"divergences", report["ranks"]["divergences"]}, {"findings", nlohmann::json::array()}};
  for (const auto& finding : report["findings"]) {
    const std::string rule = finding["rule"];
    if (rule.rfind("ranks/", 0) == 0 || rule.rfind("recompile/", 0) == 0 || rule.rfind("graph-break/", 0) == 0) {
      result["findings"].push_back(finding);
    }
  }
  return result;
}

// golden/ranks/<case>.json; TORCHSCOPE_UPDATE_GOLDEN=1 rewrites it.
class RankGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(RankGolden, DivergencesAndFindingsMatchExpectedFile) {
  const std::string name = GetParam();
  const nlohmann::json actual = rankReport(name);
  expectMatchesGolden(actual, goldenDir() / "ranks" / (name + ".json"));
}

INSTANTIATE_TEST_SUITE_P(RankFixtures, RankGolden, ::testing::ValuesIn(rankFixtureNames()),
                         [](const auto& param_info) { return param_info.param; });

const nlohmann::json* onlyDivergence(const nlohmann::json& report) {
  EXPECT_EQ(report["divergences"].size(), 1u) << report["divergences"].dump(2);
  return report["divergences"].size() == 1 ? &report["divergences"][0] : nullptr;
}

std::vector<std::string> rulesOf(const nlohmann::json& report) {
  std::vector<std::string> rules;
  for (const auto& finding : report["findings"]) rules.push_back(finding["rule"]);
  return rules;
}

TEST(RankDivergence, ARankWithAnExtraRecompileIsNamedWithItsCount) {
  const auto report = rankReport("extra_recompile");
  const auto* divergence = onlyDivergence(report);
  ASSERT_NE(divergence, nullptr);
  EXPECT_EQ((*divergence)["rule"], "recompile/dynamic-shape");
  EXPECT_EQ((*divergence)["file"], "train.py");
  EXPECT_EQ((*divergence)["line"], 12);
  EXPECT_EQ((*divergence)["ranks"], nlohmann::json::array({2}));
  EXPECT_EQ((*divergence)["counts"], nlohmann::json::array({2}));
  EXPECT_EQ((*divergence)["majority_count"], 1);
  EXPECT_EQ((*divergence)["majority_ranks"], nlohmann::json::array({0, 1, 3}));
}

TEST(RankDivergence, ARankWithAnExtraGraphBreakIsNamedByTheBreaksRegistryId) {
  const auto report = rankReport("extra_break");
  const auto* divergence = onlyDivergence(report);
  ASSERT_NE(divergence, nullptr);
  EXPECT_EQ((*divergence)["rule"], "graph-break/data-dependent-branch");
  EXPECT_EQ((*divergence)["registry_id"], "GB0170");
  EXPECT_EQ((*divergence)["ranks"], nlohmann::json::array({1}));
  EXPECT_EQ((*divergence)["majority_count"], 0);
  const auto rules = rulesOf(report);
  EXPECT_NE(std::find(rules.begin(), rules.end(), "ranks/divergent-graph-break"), rules.end());
}

TEST(RankDivergence, RanksThatRecordedTheSameAreNotDivergent) {
  for (const char* name : {"all_equal", "same_recompile_uneven_cost"}) {
    const auto report = rankReport(name);
    EXPECT_TRUE(report["divergences"].empty()) << name << ": " << report["divergences"].dump(2);
    for (const auto& rule : rulesOf(report)) EXPECT_EQ(rule.rfind("ranks/divergent-", 0), std::string::npos) << name;
  }
  // The uneven case is the one a comparison of findings got wrong: only rank 1's recompile was worth a finding.
  const auto rules = rulesOf(rankReport("same_recompile_uneven_cost"));
  EXPECT_NE(std::find(rules.begin(), rules.end(), "recompile/dynamic-shape"), rules.end());
}

TEST(RankDivergence, ARecompileTooCheapForAFindingIsStillDivergent) {
  const auto report = rankReport("cheap_recompile");
  for (const auto& rule : rulesOf(report)) EXPECT_NE(rule.rfind("recompile/", 0), 0u) << rule;
  const auto* divergence = onlyDivergence(report);
  ASSERT_NE(divergence, nullptr);
  EXPECT_EQ((*divergence)["rule"], "recompile/python-scalar");
  EXPECT_EQ((*divergence)["file"], "train.py");
  EXPECT_EQ((*divergence)["line"], 40);
  EXPECT_EQ((*divergence)["ranks"], nlohmann::json::array({3}));
  const auto finding = std::find_if(report["findings"].begin(), report["findings"].end(), [](const auto& f) {
    return f["rule"] == "ranks/divergent-recompile";
  });
  ASSERT_NE(finding, report["findings"].end());
  EXPECT_EQ((*finding)["location"]["file"], "train.py");
  EXPECT_EQ((*finding)["location"]["line"], 40);
  EXPECT_NE((*finding)["message"].get<std::string>().find("rank 3 (once)"), std::string::npos) << (*finding)["message"];
}

TEST(Ranks, TheMergedExportPutsTheRanksOnOneClock) {
  TempDir dir;
  RankPlan late{1};
  late.wall_offset_ns = 1'000 * kMs;  // rank 1 started one second after rank 0 (same monotonic times)
  auto stores = writeFolder(dir, {{0}, late});
  std::ostringstream out;
  auto report = interop::exportMergedChromeTrace(stores, out);
  ASSERT_TRUE(report.ok()) << report.error().message;
  const auto trace = nlohmann::json::parse(out.str());
  std::map<std::int64_t, double> first_step_us;  // pid -> ts
  std::map<std::int64_t, std::string> names;
  for (const auto& event : trace["traceEvents"]) {
    const std::int64_t pid = event["pid"];
    if (event["ph"] == "M" && event["name"] == "process_name") names[pid] = event["args"]["name"];
    if (event["ph"] == "X" && event["name"] == "ProfilerStep#0") first_step_us[pid] = event["ts"];
  }
  ASSERT_EQ(first_step_us.size(), 2u);
  const std::int64_t rank0 = 100'000'000 + 100, rank1 = 200'000'000 + 101;
  EXPECT_EQ(names[rank0].rfind("rank 0: ", 0), 0u) << names[rank0];
  EXPECT_EQ(names[rank1].rfind("rank 1: ", 0), 0u) << names[rank1];
  EXPECT_DOUBLE_EQ(first_step_us[rank0], 0.0);
  EXPECT_DOUBLE_EQ(first_step_us[rank1], 1e6);
}

}  // namespace
}  // namespace torchscope::analyzer::testing
