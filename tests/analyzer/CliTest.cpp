// `torchscope advise` and `torchscope compare` as users run them: exit codes, formats, files.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "TestSupport.h"
#include "torchscope/store/Reader.h"
#include "torchscope/testing/Subprocess.h"

namespace torchscope::analyzer::testing {
namespace {

using torchscope::testing::ProgramOutcome;
using torchscope::testing::runTorchscope;

TEST(AdviseCli, PrintsRankedFindingsWithoutColourWhenPiped) {
  TempDir dir;
  const ProgramOutcome run = runTorchscope("advise " + fixtureStore(dir, "syncs"));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("sync/item"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos);
}

// The item() break inside PyG (graph_break_sites.json) is the user's model line by default; naming PyG's folder as
// user code, on the command line or in the environment, moves it into PyG.
TEST(AdviseCli, UserCodeMovesFindingsIntoTheNamedDirectory) {
  TempDir dir;
  const std::string store = fixtureStore(dir, "graph_break_sites");
  const auto itemBreak = [](const std::string& report) {
    const auto parsed = nlohmann::json::parse(report);
    for (const auto& finding : parsed["findings"]) {
      if (finding["rule"] == "graph-break/item") return finding["location"];
    }
    return nlohmann::json();
  };
  const ProgramOutcome plain = runTorchscope("advise " + store + " --format json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(itemBreak(plain.out)["file"], "/work/proj/model.py");
  EXPECT_EQ(itemBreak(plain.out)["line"], 102);
  const std::string pyg = "/work/proj/.venv/lib/python3.11/site-packages/torch_geometric";
  const ProgramOutcome widened = runTorchscope("advise --user-code " + pyg + " " + store + " --format json");
  ASSERT_EQ(widened.exit_code, 0) << widened.err;
  EXPECT_EQ(itemBreak(widened.out)["file"], pyg + "/nn/conv/sage_conv.py");
  EXPECT_EQ(itemBreak(widened.out)["line"], 120);
  const ProgramOutcome environment = runTorchscope("advise " + store + " --format json", "TORCHSCOPE_USER_CODE=" + pyg + "/");
  ASSERT_EQ(environment.exit_code, 0) << environment.err;
  EXPECT_EQ(itemBreak(environment.out)["file"], pyg + "/nn/conv/sage_conv.py");
}

TEST(AdviseCli, WritesEveryFormatToAFile) {
  TempDir dir;
  const std::string store = fixtureStore(dir, "gpu_launch_bound");
  for (const char* format : {"json", "sarif", "junit", "markdown", "html", "text"}) {
    const std::string output = dir.file(std::string("report.") + format);
    const ProgramOutcome run = runTorchscope("advise " + store + " --format " + format + " -o " + output);
    EXPECT_EQ(run.exit_code, 0) << format << ": " << run.err;
    EXPECT_TRUE(run.out.empty()) << format;
    std::stringstream text;
    text << std::ifstream(output).rdbuf();
    EXPECT_FALSE(text.str().empty()) << format;
    if (std::string(format) == "json") {
      EXPECT_EQ(nlohmann::json::parse(text.str())["findings"][0]["rule"], "gpu/idle");
    }
  }
}

TEST(AdviseCli, SaveStoresTheFindings) {
  TempDir dir;
  const std::string store = fixtureStore(dir, "memcpy_pageable");
  ASSERT_EQ(runTorchscope("advise --save " + store).exit_code, 0);
  auto reader = store::Reader::open(store);
  ASSERT_TRUE(reader.ok());
  auto findings = (*reader)->load<store::Finding>();
  ASSERT_TRUE(findings.ok());
  ASSERT_EQ(findings->size(), 1u);
  EXPECT_EQ((*findings)[0].rule, "memcpy/pageable");
}

TEST(AdviseCli, PartialRunIsAnalysedWithANote) {
  TempDir dir;
  const ProgramOutcome run = runTorchscope("advise " + fixtureStore(dir, "partial"));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("partial"), std::string::npos) << run.out;
}

TEST(AdviseCli, BadInputExitsWithTwoAndOneLine) {
  TempDir dir;
  const std::string foreign = dir.file("foreign.db");
  std::ofstream(foreign) << "definitely not sqlite";
  const std::string corrupt = dir.file("corrupt.db");
  {
    std::filesystem::copy_file(fixtureStore(dir, "syncs"), corrupt);
    std::fstream file(corrupt, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(0);
    file << std::string(64, '\xff');
  }
  for (const std::string& arguments : {"advise " + foreign, "advise " + corrupt, "advise " + dir.file("missing.db"),
                                       "advise " + foreign + " --format yaml", "compare " + foreign + " " + corrupt}) {
    const ProgramOutcome run = runTorchscope(arguments);
    EXPECT_EQ(run.exit_code, 2) << arguments << ": " << run.err;
    EXPECT_EQ(run.err.rfind("torchscope: ", 0), 0u) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

TEST(CompareCli, GateFailsOnRegressionAndPassesTheOtherWay) {
  TempDir dir;
  const std::string clean = fixtureStore(dir, "clean");
  const std::string broken = fixtureStore(dir, "graph_breaks");
  EXPECT_EQ(runTorchscope("compare " + clean + " " + clean).exit_code, 0);
  const ProgramOutcome worse = runTorchscope("compare " + clean + " " + broken + " --format markdown");
  EXPECT_EQ(worse.exit_code, 1) << worse.err;
  EXPECT_NE(worse.out.find("New problems"), std::string::npos);
  EXPECT_EQ(runTorchscope("compare " + broken + " " + clean + " --threshold 1000").exit_code, 0);
}

struct RankRun {
  double step_ms = 10;
  int recompiles = 0;  // dynamic-shape recompiles at train.py:12
};

// A run folder as torchrun leaves it: one store per rank (`run.rank<r>.<pid>.db`), 30 steps of about `step_ms`
// (jittered by +-1 %).
std::string runFolder(const TempDir& dir, const std::string& name, const std::vector<RankRun>& ranks) {
  constexpr std::int64_t kSecond = 1'000'000'000;
  const std::string folder = dir.file(name);
  std::filesystem::create_directories(folder);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    nlohmann::json steps = nlohmann::json::array(), recompiles = nlohmann::json::array();
    std::int64_t t = kSecond;
    for (int i = 0; i < 30; ++i) {
      const auto length = static_cast<std::int64_t>(ranks[r].step_ms * 1e6 * (1.0 + 0.01 * ((i * 7 + static_cast<int>(r)) % 5 - 2) / 2.0));
      steps.push_back({{"index", i}, {"start_ns", t}, {"end_ns", t + length}, {"source", "optimizer"}});
      t += length;
    }
    for (int i = 0; i < ranks[r].recompiles; ++i) {
      recompiles.push_back({{"frame_id", 0}, {"frame_compile_id", i + 1}, {"ts_ns", kSecond}, {"co_name", "forward"},
                            {"co_filename", "model.py"}, {"co_firstlineno", 10}, {"cause", "dynamic-shape"},
                            {"entry_file", "train.py"}, {"entry_line", 12}});
    }
    const nlohmann::json fixture = {{"run", {{"start_ns", kSecond}, {"end_ns", t}}}, {"steps", steps}, {"recompiles", recompiles}};
    EXPECT_EQ(buildStore(fixture, folder + "/run.rank" + std::to_string(r) + "." + std::to_string(100 + r) + ".db"), "");
  }
  return folder;
}

TEST(CompareCli, RunFoldersAreComparedWholeAndARegressedRankFailsTheGate) {
  TempDir dir;
  const std::string base = runFolder(dir, "base", {{}, {}, {}, {}});
  const std::string slow = runFolder(dir, "slow", {{}, {13}, {}, {}});  // rank 1 alone is 30 % slower

  const ProgramOutcome same = runTorchscope("compare " + base + " " + base + " --format json");
  EXPECT_EQ(same.exit_code, 0) << same.err;

  const ProgramOutcome worse = runTorchscope("compare " + base + " " + slow + " --format json");
  EXPECT_EQ(worse.exit_code, 1) << worse.err;
  const auto report = nlohmann::json::parse(worse.out);
  EXPECT_TRUE(report["failed"].get<bool>());
  EXPECT_TRUE(report["step_time"]["regression"].get<bool>());
  EXPECT_NEAR(report["step_time"]["change_percent"].get<double>(), 30, 1);  // the job runs at its slowest rank's pace
  EXPECT_EQ(report["slowest_rank"]["new"], 1);
  ASSERT_EQ(report["ranks"].size(), 4u);
  for (const auto& rank : report["ranks"]) {
    EXPECT_EQ(rank["new"]["steps"], rank["base"]["steps"]);
    if (rank["rank"] == 1) {
      EXPECT_NEAR(rank["change_percent"].get<double>(), 30, 1) << rank.dump();
    } else {
      EXPECT_NEAR(rank["change_percent"].get<double>(), 0, 1) << rank.dump();
    }
  }

  const ProgramOutcome text = runTorchscope("compare " + base + " " + slow);
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find("rank 1: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("slowest in the new run"), std::string::npos) << text.out;
  EXPECT_EQ(runTorchscope("compare " + slow + " " + base).exit_code, 0);
}

TEST(CompareCli, ARankThatNowRecompilesMoreThanTheOthersFailsTheGate) {
  TempDir dir;
  const std::string base = runFolder(dir, "base", {{10, 1}, {10, 1}, {10, 1}, {10, 1}});
  const std::string divergent = runFolder(dir, "divergent", {{10, 1}, {10, 1}, {10, 2}, {10, 1}});
  const ProgramOutcome outcome = runTorchscope("compare " + base + " " + divergent + " --format json");
  EXPECT_EQ(outcome.exit_code, 1) << outcome.err;
  const auto report = nlohmann::json::parse(outcome.out);
  EXPECT_TRUE(report["new_problems"].empty()) << report["new_problems"].dump();  // the same recompile as before...
  EXPECT_TRUE(report["divergence_regression"].get<bool>());                      // ...but now on rank 2 twice
  bool named = false;
  for (const auto& finding : report["findings"]["new"]) {
    if (finding["rule"] == "ranks/divergent-recompile") {
      named = finding["new_ranks"] == nlohmann::json::array({2}) && finding["location"]["file"] == "train.py";
    }
  }
  EXPECT_TRUE(named) << report["findings"].dump(2);
  EXPECT_EQ(runTorchscope("compare " + divergent + " " + base).exit_code, 0);
}

}  // namespace
}  // namespace torchscope::analyzer::testing
