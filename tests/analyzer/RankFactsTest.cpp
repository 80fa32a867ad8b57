// The analysis in two steps (RankFacts.h): each store mapped to its facts file, the files merged, against the
// stores analysed whole, byte for byte in every report format; stores not analysed and facts that are refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "RankStores.h"
#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/RankFacts.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/interop/Import.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::analyzer::testing {
namespace {

namespace fs = std::filesystem;

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Every store's facts in `facts_dir`, named after the store.
std::vector<std::string> mapEach(const std::vector<std::string>& stores, const std::string& facts_dir,
                                 const AnalyzeOptions& options) {
  fs::create_directories(facts_dir);
  std::vector<std::string> files;
  for (const auto& store : stores) {
    auto facts = mapStore(store, options);
    EXPECT_TRUE(facts.ok()) << store << ": " << (facts.ok() ? "" : facts.error().message);
    if (!facts.ok()) continue;
    files.push_back((fs::path(facts_dir) / (fs::path(store).filename().string() + ".facts.json")).string());
    writeText(files.back(), *facts);
  }
  return files;
}

void expectSameReports(const std::vector<std::string>& stores, const TempDir& dir) {
  for (const Format format :
       {Format::kText, Format::kJson, Format::kMarkdown, Format::kSarif, Format::kJunit, Format::kHtml}) {
    AnalyzeOptions options;
    if (format == Format::kHtml) options.timeline_buckets = 160;
    auto whole = analyze(stores, options);
    ASSERT_TRUE(whole.ok()) << whole.error().message;
    const std::string facts_dir = dir.file("facts" + std::to_string(static_cast<int>(format)));
    mapEach(stores, facts_dir, options);
    auto merged = mergeFactsFiles({facts_dir});
    ASSERT_TRUE(merged.ok()) << merged.error().message;
    EXPECT_EQ(render(*merged, format), render(*whole, format)) << static_cast<int>(format);
  }
}

TEST(RankFacts, TheMergedFactsOfADdpJobGiveTheReportOfItsStoresByteForByte) {
  TempDir dir;
  // A straggler (rank 2), a rank on NCCL kernels, the others host-side DDP buckets.
  RankPlan gpu{3};
  gpu.nccl = true;
  const auto stores = writeFolder(dir, {{0}, {1}, {2, 35 * kMs}, gpu});
  expectSameReports(stores, dir);
}

TEST(RankFacts, TheMergedFactsOfImportedPerRankLogsGiveTheReportOfTheirStoresByteForByte) {
  TempDir dir;
  // Ranks that recompiled differently (the corpus's README), with their compile-time findings.
  auto imported = interop::importToRunFolder({corpusPath("torch_trace/multi_rank_logs").string()}, dir.file("run"));
  ASSERT_TRUE(imported.ok()) << imported.error().message;
  auto stores = store::expandRunFolders({dir.file("run")});
  ASSERT_TRUE(stores.ok());
  ASSERT_EQ(stores->size(), 4u);
  expectSameReports(*stores, dir);
}

TEST(RankFacts, AStoreNotAnalysedIsNamedWithItsReasonAndTheOtherRanksAreMerged) {
  TempDir dir;
  const auto stores = writeFolder(dir, {{0}, {1}, {2, 35 * kMs}, {3}});
  std::vector<std::string> documents, names;
  for (std::size_t r = 0; r < 3; ++r) {
    auto facts = mapStore(stores[r]);
    ASSERT_TRUE(facts.ok());
    documents.push_back(*facts);
    names.push_back(stores[r]);
  }
  documents.push_back(unanalysedFacts(stores[3], "node7", "the worker died while mapping it"));
  names.push_back(stores[3]);
  auto merged = mergeFacts(documents, names);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->ranks.ranks.size(), 3u);
  ASSERT_EQ(merged->ranks.unanalysed.size(), 1u);
  EXPECT_EQ(merged->ranks.unanalysed[0].rank, 3);
  EXPECT_TRUE(merged->ranks.partial);
  // Named with its reason, not counted as a rank that left no store; the report says how many ranks it covers.
  EXPECT_EQ(merged->ranks.partial_reasons,
            (std::vector<std::string>{"rank 3 (run.rank3.1.db) was not analysed on node7: the worker died while "
                                      "mapping it",
                                      "the report covers 3 of the 4 ranks"}));
  const std::string text = render(*merged, Format::kText);
  EXPECT_NE(text.find("the report covers 3 of the 4 ranks"), std::string::npos) << text;
  // The ranks merged still find their straggler.
  ASSERT_EQ(merged->ranks.stragglers.size(), 1u);
  EXPECT_EQ(merged->ranks.stragglers[0].rank, 2);
}

TEST(RankFacts, FactsOfAnotherReleaseOrFormatVersionOrDamagedFactsAreRefused) {
  TempDir dir;
  const auto stores = writeFolder(dir, {{0}, {1}});
  auto facts = mapStore(stores[0]);
  ASSERT_TRUE(facts.ok());
  const auto document = nlohmann::json::parse(*facts);
  EXPECT_EQ(document["format"], "torchscope-rank-facts");
  EXPECT_EQ(document["version"], kRankFactsVersion);
  EXPECT_EQ(document["torchscope"], std::string(releaseVersion()));

  auto other_release = document;
  other_release["torchscope"] = "0.0.1";
  auto refused = mergeFacts({other_release.dump()}, {"a.facts.json"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kVersion);
  EXPECT_NE(refused.error().message.find("torchscope 0.0.1"), std::string::npos) << refused.error().message;

  auto newer = document;
  newer["version"] = kRankFactsVersion + 1;
  refused = mergeFacts({newer.dump()}, {"a.facts.json"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kVersion);

  refused = mergeFacts({facts->substr(0, facts->size() / 2)}, {"cut.facts.json"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kCorrupt);

  auto wrong_type = document;
  wrong_type["rank"]["summary"]["step_seconds"] = "fast";
  refused = mergeFacts({wrong_type.dump()}, {"typed.facts.json"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(refused.error().message.find("typed.facts.json: damaged rank facts"), std::string::npos);

  refused = mergeFacts({R"({"format":"something else"})"}, {"other.json"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kNotTorchscope);
}

}  // namespace
}  // namespace torchscope::analyzer::testing
