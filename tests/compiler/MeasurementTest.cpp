#include <gtest/gtest.h>

#include <cmath>

#include <filesystem>
#include <fstream>

#include "torchscope/compiler/Measurement.h"
#include "torchscope/store/Writer.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;

TEST(Measurement, ReadsStepsCompilesAndCountsFromAStore) {
  const torchscope::testing::TempDir dir;
  const auto path = dir.file("run.db");
  {
    auto writer = store::Writer::open(path);
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    store::RunInfo run;
    run.command_line = "python train.py";
    run.start_ns = 1'000'000'000;
    (*writer)->setRun(run);
    const base::Nanos s = 1'000'000'000;
    (*writer)->add(store::Step{1, 1, 0, s, s + 500'000'000, "optimizer"});
    (*writer)->add(store::Step{1, 1, 1, s + 500'000'000, s + 600'000'000, "optimizer"});
    (*writer)->add(store::Step{1, 1, 2, s + 600'000'000, s + 700'000'000, "optimizer"});
    store::Compile compile;
    compile.start_ns = s + 100'000'000;
    compile.end_ns = s + 400'000'000;
    (*writer)->add(compile);
    store::Recompile shape;
    shape.cause = "dynamic-shape";
    (*writer)->add(shape);
    store::Recompile scalar;
    scalar.cause = "python-scalar";
    (*writer)->add(scalar);
    (*writer)->add(store::GraphBreak{});
    for (int i = 0; i < 4; ++i) (*writer)->add(store::Sync{});
    ASSERT_TRUE((*writer)->close(s + 800'000'000).ok());
  }
  RunMeasurement measurement;
  ASSERT_TRUE(readStore(path, measurement).ok());
  ASSERT_EQ(measurement.steps.size(), 3U);
  EXPECT_EQ(measurement.steps_source, "store");
  EXPECT_TRUE(measurement.steps[0].overlaps_compile);
  EXPECT_FALSE(measurement.steps[1].overlaps_compile);
  EXPECT_NEAR(measurement.steps[1].end_s - measurement.steps[1].start_s, 0.1, 1e-9);
  EXPECT_NEAR(measurement.compile_time_s, 0.3, 1e-9);
  EXPECT_EQ(measurement.recompiles, 2);
  EXPECT_EQ(recompilesOf(measurement, "dynamic-shape"), 1);
  EXPECT_EQ(recompilesOf(measurement, "type-or-identity"), 0);
  EXPECT_EQ(measurement.graph_breaks, 1);
  EXPECT_EQ(measurement.syncs, 4);
  // Step 0 compiled; with no warm-up skipped only the two steady steps remain.
  EXPECT_EQ(steadyStateStepTimes(measurement, 0).size(), 2U);
  EXPECT_EQ(steadyStateStepTimes(measurement, 2).size(), 1U);
}

TEST(Measurement, ReadsTheLauncherReport) {
  const torchscope::testing::TempDir dir;
  const auto path = dir.path() / "launch.json";
  std::ofstream(path) << R"({"wall_s": 3.0, "steps": [[0, 1.5, 1, 1.2], [1.5, 1.6, 0, 0.09], [1.6, 1.8, 0, 0.15]],
    "compiles": [[0.1, 1.2, "0/0"]], "compile_time_s": 1.1, "compile_cpu_s": 1.9,
    "first_step": {"wall_s": 2.5, "cpu_s": 4.0}, "recompiles": 0, "graph_breaks": 2,
    "executed_files": ["/job/train.py"], "cuda_used": false, "applied_fixes": [], "exit_code": 0})";
  RunMeasurement measurement;
  ASSERT_TRUE(readLauncherReport(path.string(), measurement).ok());
  EXPECT_EQ(measurement.steps.size(), 3U);
  EXPECT_EQ(measurement.compiles, 1);
  EXPECT_EQ(measurement.graph_breaks, 2);
  EXPECT_EQ(measurement.syncs, -1);
  EXPECT_EQ(recompilesOf(measurement, "dynamic-shape"), 0);  // no causes: every recompile counts
  EXPECT_TRUE(measurement.executed_files_known);
  EXPECT_EQ(measurement.executed_files, std::vector<std::string>{"/job/train.py"});
  const auto steady = steadyStateStepTimes(measurement, 1);
  ASSERT_EQ(steady.size(), 2U);
  EXPECT_NEAR(steady[1], 0.2, 1e-9);
  EXPECT_EQ(steadyStateStepCpu(measurement, 1), (std::vector<double>{0.09, 0.15}));

  measurement.wall_s = 3.5;  // the harness's figures for the whole process tree
  measurement.cpu_s = 6.0;
  const auto value = [&](Measure measure, Clock clock) { return metricValue(measurement, {measure, clock}, 1); };
  EXPECT_DOUBLE_EQ(value(Measure::kEndToEnd, Clock::kWall), 3.5);
  EXPECT_DOUBLE_EQ(value(Measure::kEndToEnd, Clock::kCpu), 6.0);
  EXPECT_DOUBLE_EQ(value(Measure::kFirstStep, Clock::kWall), 2.5);
  EXPECT_DOUBLE_EQ(value(Measure::kFirstStep, Clock::kCpu), 4.0);
  EXPECT_DOUBLE_EQ(value(Measure::kCompile, Clock::kWall), 1.1);
  EXPECT_DOUBLE_EQ(value(Measure::kCompile, Clock::kCpu), 1.9);
  EXPECT_NEAR(value(Measure::kSteadyStep, Clock::kWall), 0.15, 1e-9);  // median of 0.1 and 0.2
  EXPECT_NEAR(value(Measure::kSteadyStep, Clock::kCpu), 0.12, 1e-9);
}

TEST(Measurement, MetricNamesRoundTrip) {
  ASSERT_EQ(allMetrics().size(), 11U);  // four measures on both clocks, three request measures on the wall clock
  for (const Metric& metric : allMetrics()) {
    auto parsed = parseMetric(metric.name());
    ASSERT_TRUE(parsed.ok()) << metric.name();
    EXPECT_EQ(*parsed, metric);
  }
  EXPECT_EQ((Metric{Measure::kEndToEnd, Clock::kCpu}.name()), "end_to_end_cpu");
  EXPECT_EQ((Metric{Measure::kSteadyStep, Clock::kWall}.title()), "steady-state step wall time");
  EXPECT_FALSE(parseMetric("total").ok());
}

TEST(Measurement, OlderLauncherReportsLackCpuTime) {
  const torchscope::testing::TempDir dir;
  const auto path = dir.path() / "old-launch.json";
  std::ofstream(path) << R"({"wall_s": 3.0, "steps": [[0, 1.5, 1], [1.5, 1.6, 0]], "compiles": [], "recompiles": 0})";
  RunMeasurement measurement;
  ASSERT_TRUE(readLauncherReport(path.string(), measurement).ok());
  EXPECT_TRUE(steadyStateStepCpu(measurement, 0).empty());
  EXPECT_DOUBLE_EQ(metricValue(measurement, {Measure::kFirstStep, Clock::kCpu}, 0), -1);
  EXPECT_FALSE(measurement.executed_files_known);
}

TEST(Measurement, ReadsTheFixesThatCouldNotActWithTheirReasons) {
  const torchscope::testing::TempDir dir;
  const auto path = dir.path() / "launch.json";
  std::ofstream(path) << R"({"wall_s": 2.0, "steps": [], "compiles": [], "recompiles": 0,
      "not_applicable": {"quantize-dynamic": "torch cannot run the quantized Classifier", "channels-last": 3}})";
  RunMeasurement measurement;
  ASSERT_TRUE(readLauncherReport(path.string(), measurement).ok());
  ASSERT_EQ(measurement.not_applicable.size(), 1u);  // a reason that is not text is left out
  EXPECT_EQ(measurement.not_applicable.at("quantize-dynamic"), "torch cannot run the quantized Classifier");
}

TEST(Measurement, AnInferenceJobIsMeasuredOnItsRequestsAndKeepsItsOutputs) {
  const torchscope::testing::TempDir dir;
  const auto path = dir.path() / "launch.json";
  // No training steps; five requests, the second overlapping a compile; two outputs kept, one not comparable.
  std::ofstream(path) << R"({"wall_s": 4.0, "steps": [], "compiles": [[1.05, 1.15, "0/0"]], "recompiles": 0,
    "requests": [[1.0, 1.01, 8], [1.1, 1.2, 8], [1.3, 1.302, 8], [1.4, 1.404, 8], [1.5, 1.503, 4]],
    "outputs": [{"leaves": [{"path": "output", "shape": [2, 2], "values": [0.5, null, 1.0, 2.0], "abs_max": 2.0,
                             "top1": [1, 1]}]},
                {"not_comparable": "output is a mypkg.Result"}]})";
  RunMeasurement measurement;
  ASSERT_TRUE(readLauncherReport(path.string(), measurement).ok());
  EXPECT_TRUE(isInference(measurement));
  EXPECT_EQ(measurement.request_items, (std::vector<std::int64_t>{8, 8, 8, 8, 4}));
  // The warm-up request and the compiling one are left out.
  const auto steady = steadyRequestTimes(measurement, 1);
  ASSERT_EQ(steady.size(), 3U);
  EXPECT_NEAR(metricValue(measurement, {Measure::kRequestP50, Clock::kWall}, 1), 0.003, 1e-9);
  EXPECT_NEAR(metricValue(measurement, {Measure::kRequestP99, Clock::kWall}, 1), 0.00398, 1e-9);  // interpolated
  EXPECT_NEAR(metricValue(measurement, {Measure::kRequestMean, Clock::kWall}, 1), 0.003, 1e-9);
  EXPECT_EQ(metricValue(measurement, {Measure::kRequestP50, Clock::kCpu}, 1), -1);
  ASSERT_EQ(measurement.outputs.size(), 2U);
  ASSERT_EQ(measurement.outputs[0].leaves.size(), 1U);
  EXPECT_TRUE(std::isnan(measurement.outputs[0].leaves[0].values[1]));
  EXPECT_EQ(measurement.outputs[0].leaves[0].top1, (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(measurement.outputs[1].not_comparable, "output is a mypkg.Result");
  EXPECT_EQ(parseMetric("request_p99_wall")->measure, Measure::kRequestP99);

  // A training job's forward calls are no requests.
  measurement.steps.push_back({0.5, 0.9});
  EXPECT_FALSE(isInference(measurement));
  EXPECT_EQ(metricValue(measurement, {Measure::kRequestP50, Clock::kWall}, 1), -1);
}

TEST(Measurement, BadFilesAreErrors) {
  RunMeasurement measurement;
  EXPECT_FALSE(readLauncherReport("/nonexistent/launch.json", measurement).ok());
  const torchscope::testing::TempDir dir;
  const auto path = dir.path() / "bad.json";
  std::ofstream(path) << "not json";
  EXPECT_FALSE(readLauncherReport(path.string(), measurement).ok());
  EXPECT_FALSE(readStore(path.string(), measurement).ok());
}

}  // namespace
}  // namespace torchscope::compiler
