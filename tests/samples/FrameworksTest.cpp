// The framework samples (samples/frameworks) through `torchscope run` -> `advise` -> `stats`: findings at the user's
// own lines, never inside the framework (whose torch.compile call stays evidence), steps found in the framework's
// loop, and each recompile's cause from its own guards. The Hugging Face job also goes through `fix`: the runtime
// dynamic-shapes fix must reach the torch.compile call the Trainer makes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "torchscope/store/Reader.h"
#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::testing {
namespace {

namespace fs = std::filesystem;

std::string samplePath(const std::string& script) {
  return std::string(TORCHSCOPE_SOURCE_DIR) + "/samples/frameworks/" + script;
}

// Empty when the job's packages import, else why not (the tests then skip, saying so).
std::string missingPackages(const std::string& modules) {
  const ProgramOutcome probe = runPython("-c 'import " + modules + "'");
  return probe.exit_code == 0 ? ""
                              : "needs " + modules +
                                    " (scripts/bootstrap.sh all installs "
                                    "samples/frameworks/requirements.txt): " +
                                    probe.out;
}

struct Profiled {
  nlohmann::json findings;
  nlohmann::json stats;
};

Profiled profile(const TempDir& dir, const std::string& script, const std::vector<std::string>& arguments = {}) {
  const fs::path store = dir.path() / "run.db";
  std::vector<std::string> job = {TORCHSCOPE_PYTHON, samplePath(script)};
  job.insert(job.end(), arguments.begin(), arguments.end());
  const ProgramOutcome run = runUnderTorchscope(store, job);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const ProgramOutcome advise = runTorchscope("advise --format json '" + store.string() + "'");
  EXPECT_EQ(advise.exit_code, 0) << advise.out << advise.err;
  const ProgramOutcome stats = runTorchscope("stats --format json '" + store.string() + "'");
  EXPECT_EQ(stats.exit_code, 0) << stats.out << stats.err;
  const auto report = nlohmann::json::parse(advise.out, nullptr, false);
  return {report.is_object() ? report["findings"] : nlohmann::json::array(),
          nlohmann::json::parse(stats.out, nullptr, false)};
}

std::vector<nlohmann::json> findingsOf(const nlohmann::json& findings, const std::string& rule) {
  std::vector<nlohmann::json> found;
  for (const auto& finding : findings) {
    if (finding["rule"] == rule) found.push_back(finding);
  }
  return found;
}

std::string fileOf(const nlohmann::json& finding) {
  return finding["location"].is_object() ? finding["location"].value("file", std::string()) : std::string();
}

// Every recompile, graph-break and compile finding sits in the sample's own file.
void expectAllAtUserLines(const nlohmann::json& findings, const std::string& script) {
  for (const auto& finding : findings) {
    const std::string rule = finding["rule"];
    if (!rule.starts_with("recompile/") && !rule.starts_with("graph-break/") && rule != "compile/time") continue;
    EXPECT_TRUE(fileOf(finding).ends_with("samples/frameworks/" + script)) << finding.dump(2);
  }
}

TEST(Frameworks, HuggingFaceTrainerRecompileIsAtTheUsersCallWithTheFrameworksCompileAsEvidence) {
  if (const std::string missing = missingPackages("transformers, accelerate"); !missing.empty())
    GTEST_SKIP() << missing;
  TempDir dir;
  const Profiled profiled = profile(dir, "hf_trainer.py");
  expectAllAtUserLines(profiled.findings, "hf_trainer.py");
  const auto shapes = findingsOf(profiled.findings, "recompile/dynamic-shape");
  ASSERT_FALSE(shapes.empty()) << profiled.findings.dump(2);
  const auto& shape = shapes.front();
  EXPECT_EQ(shape["evidence"]["framework_entry"], "accelerate") << shape.dump(2);
  EXPECT_NE(shape["evidence"]["entry"].value("file", std::string()).find("site-packages"), std::string::npos);
  const std::string fix = shape["fix"]["summary"];
  EXPECT_EQ(fix.find("pass dynamic=True to the torch.compile call"), std::string::npos) << fix;
  EXPECT_NE(fix.find("pad_to_multiple_of"), std::string::npos) << fix;
  EXPECT_EQ(shape["fix"]["id"], "dynamic-shapes");
  EXPECT_GE(profiled.stats["steps"].get<int>(), 2) << profiled.stats.dump();
}

TEST(Frameworks, LightningModuleCompilingItsInnerNetworkPointsAtItsOwnTorchCompile) {
  if (const std::string missing = missingPackages("lightning"); !missing.empty()) GTEST_SKIP() << missing;
  TempDir dir;
  const Profiled profiled = profile(dir, "lightning_job.py");
  expectAllAtUserLines(profiled.findings, "lightning_job.py");
  // Lightning replaces torch.compile by a wrapper: the user's call passes through it.
  for (const auto& finding : findingsOf(profiled.findings, "recompile/dynamic-shape")) {
    EXPECT_FALSE(finding["evidence"].contains("framework_entry")) << finding.dump(2);
    EXPECT_TRUE(finding["evidence"]["entry"].value("file", std::string()).ends_with("lightning_job.py"));
    EXPECT_NE(std::string(finding["fix"]["summary"]).find("pass dynamic=True to the torch.compile call"),
              std::string::npos);
  }
  // Validation under no_grad recompiles once for the grad mode (a finding when it costs 1 % of the run or more).
  auto reader = store::Reader::open((dir.path() / "run.db").string());
  ASSERT_TRUE(reader.ok());
  auto recompiles = (*reader)->load<store::Recompile>();
  ASSERT_TRUE(recompiles.ok());
  EXPECT_EQ(std::count_if(recompiles->begin(), recompiles->end(),
                          [](const store::Recompile& row) { return row.cause_detail == "grad_mode"; }),
            1);
  for (const auto& grad : findingsOf(profiled.findings, "recompile/global-state")) EXPECT_EQ(grad["count"], 1);
  EXPECT_GE(profiled.stats["steps"].get<int>(), 10) << profiled.stats.dump();  // 2 epochs of 7 batches
}

TEST(Frameworks, AccelerateDynamoBackendRecompileIsAtTheUsersLoop) {
  if (const std::string missing = missingPackages("accelerate"); !missing.empty()) GTEST_SKIP() << missing;
  TempDir dir;
  const Profiled profiled = profile(dir, "accelerate_loop.py");
  expectAllAtUserLines(profiled.findings, "accelerate_loop.py");
  const auto shapes = findingsOf(profiled.findings, "recompile/dynamic-shape");
  ASSERT_EQ(shapes.size(), 1U) << profiled.findings.dump(2);
  EXPECT_EQ(shapes.front()["evidence"]["framework_entry"], "accelerate");
  EXPECT_GE(profiled.stats["steps"].get<int>(), 10) << profiled.stats.dump();  // 12 optimizer steps
}

TEST(Frameworks, AdapterFlagRecompileIsCausedByItsOwnGuardNotTheGradModeBeforeIt) {
  TempDir dir;
  const Profiled profiled = profile(dir, "adapter_flags.py");
  // The store's causes, as the collector classified them: grad mode, then the flag (both guards failed the second
  // time, the grad mode on the older cache entry).
  auto reader = store::Reader::open((dir.path() / "run.db").string());
  ASSERT_TRUE(reader.ok());
  auto recompiles = (*reader)->load<store::Recompile>();
  ASSERT_TRUE(recompiles.ok());
  ASSERT_EQ(recompiles->size(), 2U);
  EXPECT_EQ((*recompiles)[0].cause, "global-state");
  EXPECT_EQ((*recompiles)[0].cause_detail, "grad_mode");
  EXPECT_NE((*recompiles)[1].guard_failures.find("grad_mode"), std::string::npos) << (*recompiles)[1].guard_failures;
  EXPECT_EQ((*recompiles)[1].cause, "python-scalar");
  EXPECT_NE((*recompiles)[1].cause_detail.find("_adapters_disabled"), std::string::npos);
  // Findings (each shown when its compile time reaches 1 % of the run): never the flag counted as grad mode.
  for (const auto& grad : findingsOf(profiled.findings, "recompile/global-state")) EXPECT_EQ(grad["count"], 1);
  for (const auto& flag : findingsOf(profiled.findings, "recompile/python-scalar")) {
    EXPECT_NE(std::string(flag["title"]).find("the flag"), std::string::npos) << flag.dump(2);
  }
}

// fix on the Trainer job: the runtime dynamic-shapes fix reaches accelerate's torch.compile call (fewer recompiles),
// with the job's output as the parity value.
TEST(Frameworks, HuggingFaceTrainerFixReachesTheTrainersTorchCompile) {
  if (const std::string missing = missingPackages("transformers, accelerate"); !missing.empty())
    GTEST_SKIP() << missing;
  TempDir dir;
  const fs::path report_path = dir.path() / "report.json";
  const ProgramOutcome fixed =
      runTorchscope("fix --fixes dynamic-shapes --repetitions 2 --format json -o '" + report_path.string() + "' -- '" +
                    TORCHSCOPE_PYTHON + "' '" + samplePath("hf_trainer.py") + "' --steps 3 2>&1");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.out;
  std::ifstream in(report_path);
  const auto report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object()) << fixed.out;
  ASSERT_EQ(report["fixes"].size(), 1U) << report.dump(2);
  const auto& dynamic = report["fixes"][0];
  EXPECT_GE(report["baseline"]["recompiles"].get<int>(), 2) << report.dump(2);
  EXPECT_LT(dynamic["recompiles_after"].get<int>(), report["baseline"]["recompiles"].get<int>()) << dynamic.dump(2);
  EXPECT_TRUE(dynamic["effect"]["shown"].get<bool>()) << dynamic.dump(2);
}

}  // namespace
}  // namespace torchscope::testing
