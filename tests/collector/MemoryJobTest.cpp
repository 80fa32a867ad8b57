// Memory capture end to end: real CPU training jobs run under `torchscope run`, checked in their stores
// and through the analyzer: host RSS per step and its in-step peak, and leaks found at the line that
// keeps the references.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "JobScripts.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/store/Reader.h"
#include "torchscope/testing/StoreRows.h"
#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::testing {
namespace {

namespace fs = std::filesystem;
using store::Reader;

constexpr double kMiB = 1024.0 * 1024.0;

struct MemoryRun {
  TempDir dir;
  fs::path store;
  std::unique_ptr<Reader> reader;
};

MemoryRun runJobUnderTorchscope(const std::string& script, const ProgramOptions& options = {},
                                int expected_exit_code = 0) {
  MemoryRun run;
  run.store = run.dir.path() / "run.db";
  const ProgramOutcome job = runUnderTorchscope(run.store, {TORCHSCOPE_PYTHON, scriptPath(script).string()}, options);
  EXPECT_EQ(job.exit_code, expected_exit_code) << job.err;
  run.reader = openStore(run.store);
  return run;
}

// The step-end values of one host series, in step order.
std::vector<store::MemorySample> stepSamples(const Reader& reader, const std::string& series) {
  auto samples = reader.load<store::MemorySample>();
  EXPECT_TRUE(samples.ok());
  std::vector<store::MemorySample> picked;
  for (const auto& sample : samples.value()) {
    if (sample.series == series && sample.step >= 0) picked.push_back(sample);
  }
  std::sort(picked.begin(), picked.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  return picked;
}

std::vector<store::Finding> findings(const fs::path& store, analyzer::RuleId rule) {
  auto analysis = analyzer::analyze({store.string()});
  EXPECT_TRUE(analysis.ok()) << (analysis.ok() ? "" : analysis.error().message);
  std::vector<store::Finding> picked;
  if (!analysis.ok()) return picked;
  for (const auto& finding : analysis->findings) {
    if (finding.rule == rule) picked.push_back(analyzer::findingRecord(finding));
  }
  return picked;
}

TEST(MemoryJob, AStepEndASamplerPeriodHasTheHostRssAndTheRunItsPeak) {
  // The script exits with 3 on purpose (the exit code is passed on).
  const MemoryRun run = runJobUnderTorchscope("clean_training.py", {}, 3);
  ASSERT_TRUE(run.reader);
  auto steps = run.reader->load<store::Step>();
  ASSERT_TRUE(steps.ok());
  const auto rss = stepSamples(*run.reader, "host.rss");
  const auto peaks = stepSamples(*run.reader, "host.rss_peak");
  ASSERT_FALSE(rss.empty());
  ASSERT_EQ(peaks.size(), rss.size());
  // A step end has a row exactly when no step end of the 20 ms before it had one (the default sampler period).
  constexpr std::int64_t kPeriodNs = 20'000'000;
  std::size_t row = 0;
  std::int64_t last_read_ns = -1;
  for (const store::Step& step : *steps) {
    const bool read = last_read_ns < 0 || step.end_ns - last_read_ns >= kPeriodNs;
    ASSERT_EQ(row < rss.size() && rss[row].step == step.index, read) << "step " << step.index;
    if (!read) continue;
    last_read_ns = step.end_ns;
    EXPECT_EQ(rss[row].ts_ns, step.end_ns);
    EXPECT_EQ(rss[row].device, -1);
    EXPECT_GT(rss[row].value, 50 * kMiB);  // an interpreter with torch loaded
    EXPECT_EQ(peaks[row].step, step.index);
    EXPECT_GE(peaks[row].value, rss[row].value);
    ++row;
  }
  EXPECT_EQ(row, rss.size());
  auto samples = run.reader->load<store::MemorySample>();
  ASSERT_TRUE(samples.ok());
  const auto hwm = std::find_if(samples->begin(), samples->end(), [](const auto& s) { return s.series == "host.hwm"; });
  ASSERT_NE(hwm, samples->end());
  for (const auto& peak : peaks) EXPECT_GE(hwm->value, peak.value);
  EXPECT_TRUE(run.reader->load<store::MemoryHolder>()->empty());
  EXPECT_TRUE(findings(run.store, "memory/growth").empty());

  // `stats` lists the series with their highest and last value; `export` draws them as counter tracks.
  const ProgramOutcome stats = runProgram({torchscopeExecutable().string(), "stats", run.store.string(), "--format", "json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const auto listed = nlohmann::json::parse(stats.out)["memory"];
  const auto rss_listed =
      std::find_if(listed.begin(), listed.end(), [](const auto& s) { return s["series"] == "host.rss"; });
  ASSERT_NE(rss_listed, listed.end()) << stats.out;
  EXPECT_LE((*rss_listed)["max"].get<std::int64_t>(), hwm->value);
  const fs::path trace = run.store.parent_path() / "trace.json";
  const ProgramOutcome exported = runProgram({torchscopeExecutable().string(), "export", run.store.string(), "--format", "chrome",
                                     "-o", trace.string()});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::ifstream in(trace);
  const auto events = nlohmann::json::parse(in)["traceEvents"];
  const auto counters = std::count_if(events.begin(), events.end(), [](const auto& e) {
    return e["ph"] == "C" && e["name"] == "host.rss";
  });
  EXPECT_EQ(counters, (*rss_listed)["samples"].get<std::int64_t>());
}

TEST(MemoryJob, TheStackSamplersTicksReadTheRssAndTheHostMemoryThreadEnds) {
  // At the default rate (100 Hz, a tick every 10 ms on average) the stack sampler wakes more often than the
  // host-memory sampler (every 20 ms): one thread reads both. At 20 Hz it does not, and both threads run.
  for (const auto& [hz, threads] : {std::pair<std::string, std::string>{"", "torchscope-smp torchscope-wr"},
                                    {"0", "torchscope-mem torchscope-wr"},
                                    {"20", "torchscope-mem torchscope-smp torchscope-wr"}}) {
    const TempDir dir;
    const fs::path store = dir.path() / "run.db";
    ProgramOptions options;
    if (!hz.empty()) options.env["TORCHSCOPE_SAMPLE_HZ"] = hz;
    const ProgramOutcome job =
        runUnderTorchscope(store, {TORCHSCOPE_PYTHON, scriptPath("side_threads.py").string()}, options);
    ASSERT_EQ(job.exit_code, 0) << job.err;
    EXPECT_EQ(job.out, threads + "\n") << "TORCHSCOPE_SAMPLE_HZ=" << hz;
    auto reader = openStore(store);
    ASSERT_TRUE(reader);
    auto samples = reader->load<store::MemorySample>();
    ASSERT_TRUE(samples.ok());
    // Whichever thread reads: a between-steps row every 500 ms of the 1.2 s job, and each step-end row's peak.
    const auto between = std::count_if(samples->begin(), samples->end(),
                                       [](const auto& s) { return s.series == "host.rss" && s.step < 0; });
    EXPECT_GE(between, 1) << "TORCHSCOPE_SAMPLE_HZ=" << hz;
    EXPECT_FALSE(stepSamples(*reader, "host.rss_peak").empty());
  }
}

TEST(MemoryJob, TheStepPeakCatchesOneLayersActivationsThatAreGoneAtTheStepEnd) {
  ProgramOptions options;
  options.env["TORCHSCOPE_MEMORY_SAMPLE_MS"] = "1";
  const MemoryRun run = runJobUnderTorchscope("activation_peak.py", options);
  ASSERT_TRUE(run.reader);
  const auto rss = stepSamples(*run.reader, "host.rss");
  const auto peaks = stepSamples(*run.reader, "host.rss_peak");
  ASSERT_GE(rss.size(), 3u);
  ASSERT_EQ(peaks.size(), rss.size());
  // The 64 MiB activation of the wide layer (and its ReLU and gradients) lives only inside the step.
  std::int64_t highest_excess = 0;
  for (std::size_t i = 1; i < rss.size(); ++i) highest_excess = std::max(highest_excess, peaks[i].value - rss[i].value);
  EXPECT_GT(static_cast<double>(highest_excess), 48 * kMiB);
}

TEST(MemoryJob, ALossSummedAsATensorIsFoundAtItsLine) {
  const MemoryRun run = runJobUnderTorchscope("leak_loss_sum.py");
  ASSERT_TRUE(run.reader);
  auto holders = run.reader->load<store::MemoryHolder>();
  ASSERT_TRUE(holders.ok());
  ASSERT_FALSE(holders->empty());
  const auto& holder = holders->back();
  EXPECT_EQ(holder.kind, "autograd-graph");
  EXPECT_EQ(holder.name, "total_loss");
  EXPECT_EQ(holder.file, scriptPath("leak_loss_sum.py").string());
  EXPECT_EQ(holder.line, scriptLine("leak_loss_sum.py", "leak"));
  EXPECT_EQ(holder.function, "train");
  EXPECT_GT(holder.size_after, holder.size_before);

  const auto found = findings(run.store, "memory/growth");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].file, holder.file);
  EXPECT_EQ(found[0].line, holder.line);
  EXPECT_NE(found[0].message.find("loss.item()"), std::string::npos) << found[0].message;
  const auto evidence = nlohmann::json::parse(found[0].evidence);
  EXPECT_GT(evidence["size_per_step"].get<double>(), 1.0);  // autograd nodes per step
}

TEST(MemoryJob, OutputsKeptInAListAreFoundAtTheAppendWithTheGrowthPerStep) {
  // The host growth needs the RSS at four steady step ends or more: a 1 ms period reads it at each of these 20 steps
  // of a few milliseconds (at the default 20 ms, a fast machine could leave three).
  ProgramOptions options;
  options.env["TORCHSCOPE_MEMORY_SAMPLE_MS"] = "1";
  const MemoryRun run = runJobUnderTorchscope("leak_outputs_list.py", options);
  ASSERT_TRUE(run.reader);
  const auto found = findings(run.store, "memory/growth");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].file, scriptPath("leak_outputs_list.py").string());
  EXPECT_EQ(found[0].line, scriptLine("leak_outputs_list.py", "leak"));
  const auto evidence = nlohmann::json::parse(found[0].evidence);
  EXPECT_EQ(evidence["holder"], "history");
  EXPECT_EQ(evidence["kind"], "container");
  EXPECT_DOUBLE_EQ(evidence["size_per_step"].get<double>(), 1.0);  // one output per step
  EXPECT_GE(evidence["holder_bytes"].get<double>(), 4 * kMiB);     // 1 MiB per kept output
  // Each step keeps a 1 MiB output: the host RSS grows by about that much per step.
  ASSERT_TRUE(evidence.contains("host_rss_growth_bytes_per_step")) << found[0].evidence;
  EXPECT_GT(evidence["host_rss_growth_bytes_per_step"].get<double>(), 0.5 * kMiB);
  EXPECT_LT(evidence["host_rss_growth_bytes_per_step"].get<double>(), 8 * kMiB);
}

}  // namespace
}  // namespace torchscope::testing
