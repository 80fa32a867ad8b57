// `torchscope advise` and `torchscope compare` as users run them: exit codes, formats, files.
#include <nlohmann/json.hpp>

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

}  // namespace
}  // namespace torchscope::analyzer::testing
