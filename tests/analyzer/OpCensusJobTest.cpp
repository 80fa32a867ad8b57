// compile/not-compiled from the bridge's op census on real eager jobs on the CPU (an LSTM language model unrolled
// by hand: dispatch-bound in the model; an MLP fed by a per-sample collate loop: dispatch-bound outside the model;
// an MLP of large matmuls: quiet), and eager versus compiled per region under `torchscope fix --fixes
// torch-compile`, its figures adding up.
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>

#include "TestSupport.h"
#include "torchscope/store/Reader.h"
#include "torchscope/testing/Subprocess.h"

namespace torchscope::analyzer::testing {
namespace {

using torchscope::testing::ProgramOutcome;
using torchscope::testing::runTorchscope;
using torchscope::testing::runUnderTorchscope;

// One intra-op thread: on a machine busy with other work, torch's thread pool waits on its own threads for
// milliseconds per matmul, which turns a dispatch-bound toy model into a thread-bound one.
const std::map<std::string, std::string> kOneThread = {{"OMP_NUM_THREADS", "1"}};

std::string jobScript(const std::string& name) { return sourcePath("tests/analyzer/census/" + name).string(); }

nlohmann::json findingsOf(const std::string& store) {
  const ProgramOutcome advice = runTorchscope("advise --format json '" + store + "'");
  EXPECT_EQ(advice.exit_code, 0) << advice.err;
  return nlohmann::json::parse(advice.out, nullptr, false)["findings"];
}

const nlohmann::json* findingOf(const nlohmann::json& findings, const std::string& rule) {
  for (const auto& finding : findings) {
    if (finding["rule"] == rule) return &finding;
  }
  return nullptr;
}

std::int64_t censusRows(const std::string& store) {
  auto reader = store::Reader::open(store);
  EXPECT_TRUE(reader.ok()) << (reader.ok() ? "" : reader.error().message);
  if (!reader.ok()) return -1;
  auto rows = (*reader)->load<store::OpCensus>();
  EXPECT_TRUE(rows.ok());
  return rows.ok() ? static_cast<std::int64_t>(rows->size()) : -1;
}

TEST(OpCensusJob, AnEagerDispatchBoundJobIsToldToCompileAtItsModelCall) {
  TempDir dir;
  const std::string store = dir.file("cell.db");
  torchscope::testing::ProgramOptions options;
  options.env = kOneThread;
  const ProgramOutcome job = runUnderTorchscope(store, {TORCHSCOPE_PYTHON, jobScript("cell_lm.py"), "12"}, options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(censusRows(store), 1);
  const auto findings = findingsOf(store);
  const auto* finding = findingOf(findings, "compile/not-compiled");
  ASSERT_NE(finding, nullptr) << findings.dump(1);
  EXPECT_EQ((*finding)["location"]["line"], torchscope::testing::markedLine(jobScript("cell_lm.py"), "model"));
  EXPECT_EQ((*finding)["fix"]["id"], "torch-compile");
  const auto& evidence = (*finding)["evidence"];
  EXPECT_EQ(evidence["source"], "op_census");
  EXPECT_EQ(evidence["model"], "CellLM");
  EXPECT_GE(evidence["ops"].get<int>(), 100);
  EXPECT_LE(evidence["short_ops"].get<int>(), evidence["ops"].get<int>());
  EXPECT_GE(evidence["overhead_share"].get<double>(), 0.5);
  EXPECT_LE(evidence["overhead_share"].get<double>(), 1.0);
  EXPECT_EQ(evidence["step_measured"], true);
  EXPECT_NE((*finding)["message"].get<std::string>().find("torchscope fix --fixes torch-compile"), std::string::npos);
  // Credited to the model's call: its forward's ops and its backward's, not the few outside it.
  const auto& issued = evidence["issued_by"];
  EXPECT_EQ(issued["context"], "model");
  EXPECT_EQ(issued["via"], "CellLM");
  EXPECT_GT(issued["backward_ops"].get<int>(), 0);
  EXPECT_LT(issued["ops"].get<int>(), evidence["ops"].get<int>());
  EXPECT_EQ((*finding)["count"], issued["ops"]);
}

// The step builds its batch sample by sample in Python (512 x torch.randn and two multiplications) before a small
// MLP: the finding is at the loop's line with the data-loop advice, and the model, whose few ops are not the
// loop's, gets no torch.compile advice.
TEST(OpCensusJob, ACollateLoopOutsideTheModelIsToldToBatchAtItsLine) {
  TempDir dir;
  const std::string store = dir.file("collate.db");
  torchscope::testing::ProgramOptions options;
  options.env = kOneThread;
  const ProgramOutcome job = runUnderTorchscope(store, {TORCHSCOPE_PYTHON, jobScript("collate_mlp.py"), "12"}, options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(censusRows(store), 1);
  const auto findings = findingsOf(store);
  std::vector<const nlohmann::json*> census_findings;
  for (const auto& finding : findings) {
    if (finding["rule"] == "compile/not-compiled") census_findings.push_back(&finding);
  }
  ASSERT_EQ(census_findings.size(), 1u) << findings.dump(1);
  const auto& finding = *census_findings.front();
  EXPECT_EQ(finding["location"]["line"], torchscope::testing::markedLine(jobScript("collate_mlp.py"), "collate"));
  EXPECT_EQ(finding["location"]["function"], "make_batch");
  EXPECT_EQ(finding["fix"]["id"], "");
  const std::string message = finding["message"].get<std::string>();
  for (const char* advice : {"one call on the whole batch", "DataLoader with workers", "torch.compile `make_batch`",
                             "torch.compile of the model would not touch them"}) {
    EXPECT_NE(message.find(advice), std::string::npos) << advice << " in " << message;
  }
  const auto& issued = finding["evidence"]["issued_by"];
  EXPECT_EQ(issued["context"], "outside");
  EXPECT_EQ(issued["via"], "");
  // The loop's ops, each line's: 512 aten::randn at the sample's line, 1024 aten::mul at the collate line.
  std::map<std::int64_t, std::int64_t> ops_by_line;
  for (const auto& line : issued["lines"])
    ops_by_line[line["line"].get<std::int64_t>()] = line["ops"].get<std::int64_t>();
  EXPECT_EQ(ops_by_line[torchscope::testing::markedLine(jobScript("collate_mlp.py"), "sample")], 512);
  EXPECT_EQ(ops_by_line[torchscope::testing::markedLine(jobScript("collate_mlp.py"), "collate")], 1024);
  // make_batch's ops (and a torch.stack, a slice and a multiplication after the loop), not the model's.
  EXPECT_EQ(finding["count"], issued["ops"]);
  EXPECT_GE(issued["ops"].get<int>(), 1536);
  EXPECT_LE(issued["ops"].get<int>(), 1540);
  EXPECT_GT(finding["evidence"]["ops"].get<int>(), issued["ops"].get<int>());
  EXPECT_GT(issued["step_share"].get<double>(), 0.0);
  EXPECT_LE(issued["step_share"].get<double>(), finding["evidence"]["overhead_share"].get<double>());
}

TEST(OpCensusJob, AJobOfAFewLargeMatmulsStaysQuiet) {
  TempDir dir;
  const std::string store = dir.file("mlp.db");
  const ProgramOutcome job = runUnderTorchscope(store, {TORCHSCOPE_PYTHON, jobScript("big_mlp.py"), "10"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(censusRows(store), 1);  // counted, and found not dispatch-bound
  const auto findings = findingsOf(store);
  EXPECT_EQ(findingOf(findings, "compile/not-compiled"), nullptr) << findings.dump(1);
}

TEST(OpCensusJob, OffByEnvironment) {
  TempDir dir;
  const std::string store = dir.file("off.db");
  torchscope::testing::ProgramOptions options;
  options.env = kOneThread;
  options.env["TORCHSCOPE_CENSUS"] = "0";
  const ProgramOutcome job = runUnderTorchscope(store, {TORCHSCOPE_PYTHON, jobScript("cell_lm.py"), "6"}, options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(censusRows(store), 0);
}

// `fix --fixes torch-compile` on the eager job (two time steps per sequence: a small graph, compiled in the fix's
// runs within minutes on two busy cores): each compiled region's eager and compiled time per call, and the calls
// after which its compile time pays off, adding up.
TEST(OpCensusJob, FixTorchCompileComparesEachRegionEagerAndCompiled) {
  TempDir dir;
  const ProgramOutcome fix = runTorchscope(
      "fix --fixes torch-compile --repetitions 2 --shared-compile-cache --format json -- '" TORCHSCOPE_PYTHON "' '" +
          jobScript("cell_lm.py") + "' 12 2 > '" + dir.file("fix.json") + "'",
      "OMP_NUM_THREADS=1");
  ASSERT_EQ(fix.exit_code, 0) << fix.err;
  std::ifstream in(dir.file("fix.json"));
  const auto report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object()) << fix.err;
  ASSERT_EQ(report["fixes"].size(), 1u) << report.dump(1);
  const auto& outcome = report["fixes"][0];
  ASSERT_EQ(outcome["measured"], true) << outcome.dump(1);
  const auto& worth = outcome["regions"];
  ASSERT_TRUE(worth.is_object()) << outcome.dump(1);
  ASSERT_FALSE(worth["regions"].empty()) << worth.dump(1);
  const auto& region = worth["regions"][0];
  EXPECT_EQ(region["name"], "CellLM.forward");
  EXPECT_EQ(region["call_line"], torchscope::testing::markedLine(jobScript("cell_lm.py"), "model"));
  EXPECT_EQ(region["calls"], 12);
  EXPECT_EQ(region["eager_calls"], 12);
  const double eager = region["eager_per_call_s"].get<double>();
  const double compiled = region["compiled_per_call_s"].get<double>();
  ASSERT_GT(eager, 0);
  ASSERT_GT(compiled, 0);
  EXPECT_NEAR(region["speedup"].get<double>(), eager / compiled, 1e-9 * eager / compiled);
  // (Per-call times are means over every call that compiled nothing, the first eager call's warm-up included: they
  // are not bounded by the median steady-state step of a dozen-step run.)
  ASSERT_TRUE(worth["compiled_step_s"].is_number()) << worth.dump(1);
  double saved = 0;
  for (const auto& each : worth["regions"]) saved += each["saved_s"].get<double>();
  EXPECT_NEAR(worth["saved_s"].get<double>(), saved, 1e-9);
  if (eager > compiled) {
    EXPECT_NEAR(region["payoff_calls"].get<double>(), region["compile_s"].get<double>() / (eager - compiled),
                1e-6 * region["payoff_calls"].get<double>());
  } else {
    EXPECT_TRUE(region["payoff_calls"].is_null());
  }
  // A dozen steps never repay the compile: said plainly.
  EXPECT_EQ(worth["pays"], false);
  EXPECT_NE(worth["verdict"].get<std::string>().find("does not pay"), std::string::npos) << worth["verdict"];
}

}  // namespace
}  // namespace torchscope::analyzer::testing
