// Golden tests: every file of the corpus (tests/corpus, and tests/interop/data) imported into a store;
// the store's summary must equal tests/interop/golden/<name>.json. TORCHSCOPE_UPDATE_GOLDEN=1
// rewrites the golden files instead. The logs of data/torch_versions (scripts/torch_versions/job.py
// recorded with each torch release) are imported per release: its cold and warm run as two processes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "TestSupport.h"
#include "torchscope/interop/Import.h"
#include "torchscope/testing/Golden.h"
#include "torchscope/testing/Paths.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::interop {
namespace {

using testing::TempDir;

struct GoldenCase {
  std::string name;
  std::vector<std::string> inputs;
};

// torch-<version>-cold.log.gz and torch-<version>-warm.log.gz: one case per version.
std::vector<GoldenCase> torchVersionCases() {
  std::vector<GoldenCase> cases;
  const std::string suffix = "-cold.log.gz";
  for (const auto& entry : std::filesystem::directory_iterator(testing::testData("torch_versions"))) {
    const std::string file = entry.path().filename().string();
    if (!file.starts_with("torch-") || !file.ends_with(suffix)) continue;
    const std::string stem = file.substr(0, file.size() - suffix.size());
    const std::string warm = (entry.path().parent_path() / (stem + "-warm.log.gz")).string();
    cases.push_back({"torch_versions_" + stem.substr(std::string("torch-").size()), {entry.path().string(), warm}});
  }
  std::sort(cases.begin(), cases.end(), [](const GoldenCase& a, const GoldenCase& b) { return a.name < b.name; });
  return cases;
}

std::vector<GoldenCase> goldenCases() {
  std::vector<GoldenCase> cases;
  const std::string root = std::string(TORCHSCOPE_CORPUS_DIR) + "/";
  for (const char* log : {"artifacts", "cache_hit_miss", "chromium_events", "comp_failure", "comp_metrics", "simple",
                          "simple_corrupted_json"}) {
    cases.push_back({std::string("torch_trace_") + log, {root + "torch_trace/" + log + ".log"}});
  }
  cases.push_back({"torch_trace_multi_rank_logs", {root + "torch_trace/multi_rank_logs"}});
  for (const char* trace : {"cpu_only_rank34", "critical_path_alexnet", "critical_path_cuda_event_sync_event_sync_trace",
                            "timeline_analysis_sampled_rank-0", "trace_diff_control_control", "trace_diff_test_test",
                            "triton_example_triton_example"}) {
    cases.push_back({std::string("kineto_") + trace, {root + "kineto/" + trace + ".json.gz"}});
  }
  cases.push_back({"torch_trace_graph_breaks", {testing::testData("graph_breaks.log.gz")}});
  cases.push_back({"kineto_profile_memory", {testing::testData("profile_memory.json.gz")}});
  for (GoldenCase& version : torchVersionCases()) cases.push_back(std::move(version));
  return cases;
}

void PrintTo(const GoldenCase& golden, std::ostream* out) { *out << golden.name; }

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, SummaryMatchesGoldenFile) {
  const GoldenCase& golden = GetParam();
  TempDir dir;
  auto report = importToStore(golden.inputs, dir.file("run.db"));
  ASSERT_TRUE(report.ok()) << report.error().message;
  testing::expectMatchesGolden(testing::summarizeStore(dir.file("run.db")),
                               testing::sourcePath("tests/interop/golden/" + golden.name + ".json"));
}

INSTANTIATE_TEST_SUITE_P(Corpus, GoldenTest, ::testing::ValuesIn(goldenCases()),
                         [](const auto& test) { return testing::testNameOf(test.param.name); });

}  // namespace
}  // namespace torchscope::interop
