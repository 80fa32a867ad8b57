// The GPU and compile rules on real traces and logs that this project did not write (tests/corpus): each is
// imported into a store and analysed; its gpu/* and compile/* findings must equal golden/corpus/<name>.json
// (TORCHSCOPE_UPDATE_GOLDEN=1 rewrites them). Underneath, the GPU's busy/idle timeline must agree with
// HolisticTraceAnalysis's temporal breakdown of the same traces (golden/corpus/hta_idle.json).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "Rules.h"
#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/interop/Import.h"

namespace torchscope::analyzer::testing {
namespace {

const std::filesystem::path kCorpus = corpusPath("");
const std::filesystem::path kCorpusGolden = goldenDir() / "corpus";

struct CorpusCase {
  std::string name;
  std::filesystem::path input;
};

void PrintTo(const CorpusCase& corpus_case, std::ostream* out) { *out << corpus_case.name; }

std::vector<CorpusCase> kinetoCases() {
  std::vector<CorpusCase> cases;
  for (const char* trace : {"cpu_only_rank34", "critical_path_alexnet", "critical_path_cuda_event_sync_event_sync_trace",
                            "timeline_analysis_sampled_rank-0", "trace_diff_control_control", "trace_diff_test_test",
                            "triton_example_triton_example"}) {
    cases.push_back({std::string("kineto_") + trace, kCorpus / "kineto" / (std::string(trace) + ".json.gz")});
  }
  return cases;
}

std::vector<CorpusCase> allCases() {
  std::vector<CorpusCase> cases = kinetoCases();
  for (const char* log : {"artifacts", "cache_hit_miss", "chromium_events", "comp_failure", "comp_metrics", "simple"}) {
    cases.push_back({std::string("torch_trace_") + log, kCorpus / "torch_trace" / (std::string(log) + ".log")});
  }
  cases.push_back({"torch_trace_multi_rank_logs", kCorpus / "torch_trace" / "multi_rank_logs"});
  return cases;
}

std::string importCase(const TempDir& dir, const CorpusCase& corpus_case) {
  const std::string store = dir.file(corpus_case.name + ".db");
  auto imported = interop::importToStore({corpus_case.input.string()}, store);
  EXPECT_TRUE(imported.ok()) << (imported.ok() ? "" : imported.error().message);
  return store;
}

// The findings of the rules this test pins, as the JSON report writes them.
nlohmann::json gpuAndCompileFindings(const std::string& store) {
  auto analysis = analyze({store});
  EXPECT_TRUE(analysis.ok()) << (analysis.ok() ? "" : analysis.error().message);
  if (!analysis.ok()) return nullptr;
  nlohmann::json pinned = nlohmann::json::array();
  const nlohmann::json report = nlohmann::json::parse(render(*analysis, Format::kJson));
  for (const auto& finding : report["findings"]) {
    const std::string rule = finding["rule"];
    if (rule.rfind("gpu/", 0) == 0 || rule.rfind("compile/", 0) == 0) pinned.push_back(finding);
  }
  return pinned;
}

class CorpusRules : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(CorpusRules, GpuAndCompileFindingsMatchGoldenFile) {
  TempDir dir;
  const CorpusCase& corpus_case = GetParam();
  const nlohmann::json findings = gpuAndCompileFindings(importCase(dir, corpus_case));
  expectMatchesGolden(findings, kCorpusGolden / (corpus_case.name + ".json"));
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusRules, ::testing::ValuesIn(allCases()),
                         [](const auto& test) { return testNameOf(test.param.name); });

// HTA's temporal breakdown: idle = the span from the first to the last GPU record minus the union of all GPU
// records (kernels, copies, memsets and the sync waits Kineto puts on streams). The analyzer's timeline over the
// same span counts kernels, copies and memsets as busy but not sync waits (the GPU waits then), so it agrees with
// HTA where no sync wait lies on a stream, and elsewhere may exceed HTA by at most the sync waits' total time. HTA
// also spans the `Context Sync` records Kineto puts on stream 4294967295, which the import reads as no stream: that
// is the 0.6 % by which critical_path_alexnet is below HTA (docs/validation.md), inside the 1 % asked for.
struct HtaCheck {
  double idle_s = 0;
  double stream_sync_s = 0;  // time of the sync waits on streams
  std::size_t devices = 0;
};

HtaCheck idleOverGpuSpan(const std::string& store) {
  HtaCheck check;
  auto reader = store::Reader::open(store);
  EXPECT_TRUE(reader.ok());
  auto facts = collectFacts(**reader);
  EXPECT_TRUE(facts.ok());
  constexpr std::string_view kStreamSyncs = "SELECT start_ns, end_ns FROM syncs WHERE stream >= 0 AND origin = 'import'";
  auto spanned = (*reader)->query(
      fmt::format("SELECT min(start_ns), max(end_ns) FROM (SELECT start_ns, end_ns FROM kernels UNION ALL SELECT "
                  "start_ns, end_ns FROM memcpy UNION ALL SELECT start_ns, end_ns FROM memset UNION ALL {})",
                  kStreamSyncs),
      [&](const store::Row& row) {
        facts->steady_begin_ns = row.integer(0);
        facts->steady_end_ns = row.integer(1);
      });
  EXPECT_TRUE(spanned.ok());
  auto synced = (*reader)->query(fmt::format("SELECT coalesce(sum(end_ns - start_ns), 0) FROM ({})", kStreamSyncs),
                                 [&](const store::Row& row) { check.stream_sync_s = toSeconds(row.real(0)); });
  EXPECT_TRUE(synced.ok());
  EXPECT_TRUE(scanActivity(**reader, *facts).ok());
  check.idle_s = facts->kernel_window.idle_s;
  check.devices = facts->kernel_window.devices.size();
  return check;
}

TEST(CorpusHta, GpuIdleTimeAgreesWithHolisticTraceAnalysis) {
  std::ifstream in(kCorpusGolden / "hta_idle.json");
  ASSERT_TRUE(in);
  const auto reference = nlohmann::json::parse(in);
  int compared = 0;
  for (const auto& corpus_case : kinetoCases()) {
    const std::string trace = corpus_case.input.filename().string();
    if (!reference["idle_ms"].contains(trace)) continue;  // no GPU records: HTA has no breakdown
    SCOPED_TRACE(trace);
    TempDir dir;
    const HtaCheck ours = idleOverGpuSpan(importCase(dir, corpus_case));
    const double hta_s = reference["idle_ms"][trace].get<double>() / 1e3;
    // The reference is rounded to 1 us; 1 % is the agreement the validation asks for.
    const double tolerance_s = std::max(0.01 * hta_s, 1e-6);
    EXPECT_EQ(ours.devices, 1u) << "HTA's breakdown is per rank; every corpus trace ran on one device";
    if (ours.stream_sync_s == 0) {
      EXPECT_NEAR(ours.idle_s, hta_s, tolerance_s);
    } else {
      EXPECT_GE(ours.idle_s, hta_s - tolerance_s);
      EXPECT_LE(ours.idle_s, hta_s + ours.stream_sync_s + tolerance_s);
    }
    ++compared;
  }
  EXPECT_EQ(compared, 6);
}

}  // namespace
}  // namespace torchscope::analyzer::testing
