#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "torchscope/compiler/Measurement.h"
#include "torchscope/store/Writer.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;

fs::path tempFile(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("torchscope-measure-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

TEST(Measurement, ReadsStepsCompilesAndCountsFromAStore) {
  const auto path = tempFile("run.db").string();
  {
    auto writer = store::Writer::open(path);
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    store::RunInfo run;
    run.command_line = "python train.py";
    run.start_ns = 1'000'000'000;
    (*writer)->setRun(run);
    const store::Nanos s = 1'000'000'000;
    (*writer)->add(store::Step{1, 1, 0, s, s + 500'000'000, "optimizer"});
    (*writer)->add(store::Step{1, 1, 1, s + 500'000'000, s + 600'000'000, "optimizer"});
    (*writer)->add(store::Step{1, 1, 2, s + 600'000'000, s + 700'000'000, "optimizer"});
    store::Compile compile;
    compile.start_ns = s + 100'000'000;
    compile.end_ns = s + 400'000'000;
    (*writer)->add(compile);
    (*writer)->add(store::Recompile{});
    (*writer)->add(store::Recompile{});
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
  EXPECT_EQ(measurement.graph_breaks, 1);
  EXPECT_EQ(measurement.syncs, 4);
  // Step 0 compiled; with no warm-up skipped only the two steady steps remain.
  EXPECT_EQ(steadyStateStepTimes(measurement, 0).size(), 2U);
  EXPECT_EQ(steadyStateStepTimes(measurement, 2).size(), 1U);
}

TEST(Measurement, ReadsTheLauncherReport) {
  const auto path = tempFile("launch.json");
  std::ofstream(path) << R"({"wall_s": 3.0, "steps": [[0, 1.5, 1], [1.5, 1.6, 0], [1.6, 1.8, 0]],
    "compiles": [[0.1, 1.2, "0/0"]], "compile_time_s": 1.1, "recompiles": 0, "graph_breaks": 2,
    "applied_fixes": [], "exit_code": 0})";
  RunMeasurement measurement;
  ASSERT_TRUE(readLauncherReport(path.string(), measurement).ok());
  EXPECT_EQ(measurement.steps.size(), 3U);
  EXPECT_EQ(measurement.compiles, 1);
  EXPECT_EQ(measurement.graph_breaks, 2);
  EXPECT_EQ(measurement.syncs, -1);
  const auto steady = steadyStateStepTimes(measurement, 1);
  ASSERT_EQ(steady.size(), 2U);
  EXPECT_NEAR(steady[1], 0.2, 1e-9);
}

TEST(Measurement, BadFilesAreErrors) {
  RunMeasurement measurement;
  EXPECT_FALSE(readLauncherReport("/nonexistent/launch.json", measurement).ok());
  const auto path = tempFile("bad.json");
  std::ofstream(path) << "not json";
  EXPECT_FALSE(readLauncherReport(path.string(), measurement).ok());
  EXPECT_FALSE(readStore(path.string(), measurement).ok());
}

}  // namespace
}  // namespace torchscope::compiler
