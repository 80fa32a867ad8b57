// Distributed jobs end to end: torchrun starts 4 gloo DDP ranks on the CPU under `torchscope run -o DIR/`,
// and advise/export read the run folder whole.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "JobScripts.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/RunFolder.h"
#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kRanks = 4;

ProgramOutcome runTorchrun(const fs::path& folder, const std::map<std::string, std::string>& env) {
  ProgramOptions options;
  options.env = env;
  options.env["OMP_NUM_THREADS"] = "1";
  options.env["GLOO_SOCKET_IFNAME"] = "lo";
  // The trailing slash makes -o a run folder.
  return runUnderTorchscope(folder.string() + "/",
                            {TORCHSCOPE_PYTHON, "-m", "torch.distributed.run", "--standalone",
                             "--nproc_per_node=" + std::to_string(kRanks), scriptPath("ddp_ranks.py").string()},
                            options);
}

json advise(const fs::path& folder) {
  const ProgramOutcome advice =
      runProgram({torchscopeExecutable().string(), "advise", folder.string(), "--format", "json"});
  EXPECT_EQ(advice.exit_code, 0) << advice.err;
  return json::parse(advice.out, nullptr, false);
}

const json* findingOf(const json& report, const std::string& rule) {
  for (const auto& finding : report["findings"]) {
    if (finding["rule"] == rule) return &finding;
  }
  return nullptr;
}

TEST(RanksJob, TorchrunDdpNamesTheSlowRankAndTheRankThatRecompiled) {
  const TempDir scratch;
  const fs::path& folder = scratch.path();
  const ProgramOutcome job = runTorchrun(folder, {{"COMPILE", "1"}, {"SLOW_RANK", "2"}, {"RECOMPILE_RANK", "3"}});
  ASSERT_EQ(job.exit_code, 0) << job.err;

  // One store per rank, with its identity, and torchrun's own next to them.
  std::set<long long> ranks_seen;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const long long rank = store::rankInStoreName(entry.path().filename().string());
    if (entry.path().extension() != ".db" || rank < 0) continue;
    ranks_seen.insert(rank);
    auto reader = store::Reader::open(entry.path().string());
    ASSERT_TRUE(reader.ok());
    auto processes = (*reader)->load<store::Process>();
    ASSERT_TRUE(processes.ok());
    ASSERT_FALSE(processes->empty());
    EXPECT_EQ(processes->front().rank, rank);
    EXPECT_EQ(processes->front().local_rank, rank);
    EXPECT_EQ(processes->front().world_size, kRanks);
    auto attributes = (*reader)->load<store::RunAttribute>();
    ASSERT_TRUE(attributes.ok());
    std::map<std::string, std::string> values;
    for (const auto& attribute : *attributes) values[attribute.key] = attribute.value;
    EXPECT_EQ(values[std::string(store::kLauncherAttribute)], "torchrun");
    EXPECT_FALSE(values[std::string(store::kJobIdAttribute)].empty());
  }
  EXPECT_EQ(ranks_seen, (std::set<long long>{0, 1, 2, 3}));
  EXPECT_TRUE(fs::exists(folder / "run.db"));

  const json report = advise(folder);
  ASSERT_TRUE(report.is_object());
  const json& ranks = report["ranks"];
  ASSERT_EQ(ranks["ranks"].size(), static_cast<std::size_t>(kRanks));
  EXPECT_EQ(ranks["world_size"], kRanks);
  EXPECT_EQ(ranks["launcher"], "torchrun");
  EXPECT_FALSE(ranks["partial"].get<bool>());
  for (const auto& rank : ranks["ranks"]) {
    EXPECT_GT(rank["collectives"].get<int>(), 0) << rank.dump();  // DDP's all-reduces, timed on the host
    EXPECT_EQ(rank["steps"].get<int>(), 8) << rank.dump();
  }
  ASSERT_EQ(ranks["stragglers"].size(), 1u) << ranks.dump();
  EXPECT_EQ(ranks["stragglers"][0]["rank"], 2);
  // The others wait for the slow rank in their all-reduces.
  EXPECT_GT(ranks["stragglers"][0]["others_wait_seconds"].get<double>(), 0.02);

  bool divergent_rank_3 = false;
  for (const auto& divergence : ranks["divergences"]) {
    if (divergence["rule"].get<std::string>().rfind("recompile/", 0) == 0 && divergence["ranks"] == json::array({3})) {
      divergent_rank_3 = true;
      EXPECT_EQ(divergence["file"], scriptPath("ddp_ranks.py").string());
    }
  }
  EXPECT_TRUE(divergent_rank_3) << ranks["divergences"].dump();

  const json* straggler = findingOf(report, "ranks/straggler");
  ASSERT_NE(straggler, nullptr);
  EXPECT_NE(straggler->at("title").get<std::string>().find("Rank 2"), std::string::npos);
  const json* divergent = findingOf(report, "ranks/divergent-recompile");
  ASSERT_NE(divergent, nullptr);
  EXPECT_EQ(divergent->at("evidence")["ranks"], json::array({3}));
  EXPECT_EQ(divergent->at("location")["file"], scriptPath("ddp_ranks.py").string());

  // The merged timeline: every rank's process on one clock, named by rank.
  const fs::path trace = folder / "merged.json";
  const ProgramOutcome exported = runProgram({torchscopeExecutable().string(), "export", folder.string(), "-o", trace.string()});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::ifstream in(trace);
  const json document = json::parse(in, nullptr, false);
  ASSERT_TRUE(document.is_object());
  std::set<std::string> rank_tracks;
  std::set<long long> pids;
  bool collective_slices = false;
  for (const auto& event : document["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "process_name") {
      const std::string name = event["args"]["name"];
      if (name.rfind("rank ", 0) == 0) rank_tracks.insert(name.substr(0, name.find(':')));
    }
    if (event["ph"] == "X") {
      pids.insert(event["pid"].get<long long>());
      EXPECT_GE(event["ts"].get<double>(), 0.0);
      if (event["cat"] == "collective") collective_slices = true;
    }
  }
  EXPECT_EQ(rank_tracks, (std::set<std::string>{"rank 0", "rank 1", "rank 2", "rank 3"}));
  EXPECT_GE(pids.size(), static_cast<std::size_t>(kRanks));
  EXPECT_TRUE(collective_slices);
}

TEST(RanksJob, ARankThatCrashesLeavesTheOthersCompleteAndTheRunPartial) {
  const TempDir scratch;
  const fs::path& folder = scratch.path();
  const ProgramOutcome job = runTorchrun(folder, {{"CRASH_RANK", "1"}, {"STEPS", "6"}});
  EXPECT_NE(job.exit_code, 0);

  const json report = advise(folder);
  ASSERT_TRUE(report.is_object());
  const json& ranks = report["ranks"];
  EXPECT_TRUE(ranks["partial"].get<bool>()) << ranks.dump();
  ASSERT_EQ(ranks["ranks"].size(), static_cast<std::size_t>(kRanks)) << ranks.dump();
  for (const auto& rank : ranks["ranks"]) {
    // Killed with SIGKILL, rank 1 never closed its store; torchrun stopped the others, which closed theirs.
    EXPECT_EQ(rank["partial"].get<bool>(), rank["rank"] == 1) << rank.dump();
    if (rank["rank"] == 1) {
      EXPECT_GE(rank["steps"].get<int>(), 1) << rank.dump();  // committed before the kill
    }
  }
}

}  // namespace
}  // namespace torchscope::testing
