// The demo's promises, checked on the real sample at the scale the demo runs (`--scale demo`): as
// written (profiled by `torchscope demo --profile-only`), the RDL job shows recompiles from shapes and from the float
// lr and graph breaks at the planted lines; tuned, it shows none of them.
#include <filesystem>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "torchscope/testing/Paths.h"
#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope {
namespace {

nlohmann::json adviseJson(const std::string& store) {
  const auto advise = testing::runTorchscope("advise " + store + " --format json 2>&1");
  EXPECT_EQ(advise.exit_code, 0) << advise.out;
  return nlohmann::json::parse(advise.out, nullptr, /*allow_exceptions=*/false);
}

// Profiles the tuned sample and returns advise's JSON findings.
nlohmann::json profileTunedAndAdvise(const testing::TempDir& dir) {
  const std::string store = dir.file("tuned.db");
  const std::string cli = testing::torchscopeExecutable().string();
  const auto run = testing::runShell("cd " + std::string(TORCHSCOPE_SOURCE_DIR) + " && " + cli + " run -o " + store +
                                     " -- " + TORCHSCOPE_PYTHON + " -m samples.rdl_hm.train --scale demo --tuned 2>&1");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, ::testing::HasSubstr("final "));
  return adviseJson(store);
}

bool inSample(const nlohmann::json& finding, const std::string& file) {
  const std::string path = finding["location"]["file"].get<std::string>();
  return path.size() >= file.size() && path.compare(path.size() - file.size(), file.size(), file) == 0;
}

// `torchscope demo --profile-only` started from the checkout, as the README's user does.
TEST(Demo, AsWrittenTheRdlSampleShowsThePlantedProblems) {
  testing::TempDir dir;
  const auto demo = testing::runShell(
      "cd " + std::string(TORCHSCOPE_SOURCE_DIR) + " && TORCHSCOPE_PYTHON=" + TORCHSCOPE_PYTHON + " " +
      testing::torchscopeExecutable().string() + " demo --profile-only --workdir " + dir.path().string() + " 2>&1");
  ASSERT_EQ(demo.exit_code, 0) << demo.out;
  // The findings name the sample's files as the user opens them from there, not the build tree's link to them.
  EXPECT_THAT(demo.out, ::testing::HasSubstr("samples/rdl_hm/model.py:41"));
  EXPECT_THAT(demo.out, ::testing::Not(::testing::HasSubstr("share/torchscope")));
  const auto report = adviseJson(dir.file("rdl_hm.db"));
  ASSERT_TRUE(report.is_object());
  std::set<std::string> rules;
  std::set<std::int64_t> break_lines;
  for (const auto& finding : report["findings"]) {
    rules.insert(finding["rule"].get<std::string>());
    // Every finding names a line of the sample, never torch's, PyG's or the standard library's.
    EXPECT_NE(finding["location"]["file"].get<std::string>().find("/samples/rdl_hm/"), std::string::npos)
        << finding.dump(2);
    EXPECT_TRUE(finding["location"]["line"].is_number()) << finding.dump(2);
    if (finding["rule"].get<std::string>().rfind("graph-break/", 0) == 0 && inSample(finding, "samples/rdl_hm/model.py")) {
      break_lines.insert(finding["location"]["line"].get<std::int64_t>());
    }
  }
  EXPECT_TRUE(rules.count("recompile/dynamic-shape")) << report.dump(2);
  EXPECT_TRUE(rules.count("recompile/python-scalar")) << report.dump(2);
  // samples/rdl_hm/planted_problems.json: the data-dependent branch and repeat_interleave.
  EXPECT_TRUE(break_lines.count(41)) << report.dump(2);
  EXPECT_TRUE(break_lines.count(60)) << report.dump(2);
}

TEST(Demo, TunedTheRdlSampleHasNoneOfThem) {
  testing::TempDir dir;
  const auto report = profileTunedAndAdvise(dir);
  ASSERT_TRUE(report.is_object());
  for (const auto& finding : report["findings"]) {
    const std::string rule = finding["rule"].get<std::string>();
    EXPECT_NE(rule.rfind("recompile/", 0), 0u) << finding.dump(2);
    if (rule.rfind("graph-break/", 0) == 0) {
      // torch.optim's own deliberate break in a compiled optimizer.step() is torch's, not the sample's.
      EXPECT_FALSE(inSample(finding, "samples/rdl_hm/model.py")) << finding.dump(2);
    }
  }
}

}  // namespace
}  // namespace torchscope
