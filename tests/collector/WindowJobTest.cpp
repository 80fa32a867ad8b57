// The capture window and steps without an optimizer, end to end: real jobs under `torchscope run`, checked in the
// stores they leave and in what stats and advise say of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "JobScripts.h"
#include "torchscope/store/Reader.h"
#include "torchscope/testing/StoreRows.h"
#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::testing {
namespace {

namespace fs = std::filesystem;

// `torchscope run <window options> -o <store> -- python <script> args...`
ProgramOutcome runWindowed(const fs::path& store, const std::vector<std::string>& window, const std::string& script,
                           const std::vector<std::string>& args = {}) {
  std::vector<std::string> argv = {torchscopeExecutable().string(), "run"};
  argv.insert(argv.end(), window.begin(), window.end());
  argv.insert(argv.end(), {"-o", store.string(), "--", TORCHSCOPE_PYTHON, scriptPath(script).string()});
  argv.insert(argv.end(), args.begin(), args.end());
  return runProgram(argv);
}

// The store's capture_window row as an object of its columns; null when it has none.
nlohmann::json windowOf(const store::Reader& reader) {
  const auto windows = rows<store::CaptureWindow>(reader);
  if (windows.empty()) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  store::schema::forEachColumn<store::CaptureWindow>(
      [&](const auto& column) { out[std::string(column.name)] = windows.front().*(column.member); });
  out["intervals"] = windows.front().openIntervals();
  return out;
}

std::vector<std::int64_t> stepIndexes(const store::Reader& reader) {
  std::vector<std::int64_t> indexes;
  for (const auto& step : rows<store::Step>(reader)) indexes.push_back(step.index);
  std::sort(indexes.begin(), indexes.end());
  return indexes;
}

TEST(CaptureWindow, StepsWindowKeepsThoseStepsAndTheRecompileBeforeIt) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  const ProgramOutcome job = runWindowed(store, {"--steps", "4:7"}, "window_training.py", {"12"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, "done\n");
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  EXPECT_EQ(stepIndexes(*reader), (std::vector<std::int64_t>{4, 5, 6}));
  // The recompile at step 1, before the window, is kept whole with its compilations.
  const auto recompiles = rows<store::Recompile>(*reader);
  ASSERT_EQ(recompiles.size(), 1u);
  EXPECT_EQ(recompiles[0].cause, "dynamic-shape");
  EXPECT_GE(rows<store::Compile>(*reader).size(), 2u);
  // Memory figures only inside the window: step-end rows of the kept steps, between-step rows within its span.
  const nlohmann::json window = windowOf(*reader);
  ASSERT_TRUE(window.is_object());
  EXPECT_EQ(window["mode"], "steps");
  EXPECT_EQ(window["first_step"], 4);
  EXPECT_EQ(window["end_step"], 7);
  EXPECT_EQ(window["steps"], 3);
  EXPECT_EQ(window["first_kept_step"], 4);
  EXPECT_EQ(window["last_kept_step"], 6);
  ASSERT_EQ(window["intervals"].size(), 1u);
  const std::int64_t opened = window["intervals"][0][0];
  const std::int64_t closed = window["intervals"][0][1];
  EXPECT_LT(opened, closed);
  EXPECT_GT(window["open_s"].get<double>(), 0.0);
  for (const auto& sample : rows<store::MemorySample>(*reader)) {
    if (sample.series == "host.hwm") continue;
    if (sample.step >= 0) {
      EXPECT_TRUE(sample.step >= 4 && sample.step < 7) << sample.series << " at step " << sample.step;
    } else {
      EXPECT_TRUE(sample.ts_ns >= opened && sample.ts_ns <= closed) << sample.series;
    }
  }

  // stats and advise say which part of the run their figures come from.
  const ProgramOutcome stats = runTorchscope("stats " + store.string());
  EXPECT_NE(stats.out.find("window --steps 4:7 (steps 4-6, 3 steps"), std::string::npos) << stats.out;
  const ProgramOutcome advise_json = runTorchscope("advise --format json " + store.string());
  ASSERT_EQ(advise_json.exit_code, 0) << advise_json.err;
  const nlohmann::json report = nlohmann::json::parse(advise_json.out);
  ASSERT_TRUE(report["runs"][0].contains("window")) << advise_json.out;
  EXPECT_EQ(report["runs"][0]["window"]["mode"], "steps");
  EXPECT_EQ(report["runs"][0]["steps"], 3);
  const ProgramOutcome advise_text = runTorchscope("advise " + store.string());
  EXPECT_NE(advise_text.out.find("window --steps 4:7"), std::string::npos) << advise_text.out;
}

TEST(CaptureWindow, DelayAndDurationKeepOnlyTheStepsThatEndInside) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  // 20 ms steps until the window, open from 0.5 s after the start for 0.6 s, has closed.
  const ProgramOutcome job = runWindowed(store, {"--delay", "0.5", "--duration", "0.6"}, "window_markers.py");
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  const nlohmann::json window = windowOf(*reader);
  ASSERT_TRUE(window.is_object());
  EXPECT_EQ(window["mode"], "time");
  EXPECT_DOUBLE_EQ(window["delay_s"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(window["duration_s"].get<double>(), 0.6);
  ASSERT_EQ(window["intervals"].size(), 1u);
  const std::int64_t opened = window["intervals"][0][0];
  const std::int64_t closed = window["intervals"][0][1];
  // Never early: it opens at the delay at the soonest (later when its thread wakes late on a busy machine) and
  // closes at delay + duration from the start.
  auto run = reader->run();
  ASSERT_TRUE(run.ok());
  EXPECT_GE(static_cast<double>(opened - run->start_ns) / 1e9, 0.5);
  EXPECT_GE(static_cast<double>(closed - run->start_ns) / 1e9, 1.1);
  EXPECT_LT(static_cast<double>(closed - run->start_ns) / 1e9, 1.1 + 5);
  const auto steps = rows<store::Step>(*reader);
  ASSERT_FALSE(steps.empty());
  for (const auto& step : steps) EXPECT_TRUE(step.end_ns >= opened && step.end_ns <= closed) << step.index;
  // The steps that ended before the window are counted, not kept: the job's markers made while it was closed
  // ended steps 0 to before-2.
  const auto before = numericField(job.out, "done ", "before");
  ASSERT_TRUE(before.has_value()) << job.out;
  EXPECT_GE(steps.front().index, static_cast<std::int64_t>(*before) - 1);
  EXPECT_EQ(window["steps"], static_cast<std::int64_t>(steps.size()));
}

// The toggle driver: torchscope run --signal-toggle, SIGUSR2 sent to torchscope after the job's 5th and 10th steps.
ProgramOutcome runToggled(const fs::path& store, const std::vector<std::string>& job_args) {
  std::vector<std::string> argv = {TORCHSCOPE_PYTHON, scriptPath("window_toggle_driver.py").string(),
                                   torchscopeExecutable().string(), store.string(),
                                   scriptPath("window_toggle_job.py").string()};
  argv.insert(argv.end(), job_args.begin(), job_args.end());
  return runProgram(argv);
}

TEST(CaptureWindow, SigusrTogglesTheWindowOfARunningJob) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  const ProgramOutcome job = runToggled(store, {});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_NE(job.out.find("own handler calls 0"), std::string::npos) << job.out;
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  EXPECT_EQ(stepIndexes(*reader), (std::vector<std::int64_t>{5, 6, 7, 8, 9}));
  const nlohmann::json window = windowOf(*reader);
  ASSERT_TRUE(window.is_object());
  EXPECT_EQ(window["mode"], "signal");
  EXPECT_EQ(window["intervals"].size(), 1u);
  EXPECT_EQ(window["steps"], 5);
}

TEST(CaptureWindow, AJobsOwnSigusrHandlerStillRunsAndTheWindowStillToggles) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  const ProgramOutcome job = runToggled(store, {"--own-handler"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_NE(job.out.find("own handler calls 2"), std::string::npos) << job.out;
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  EXPECT_EQ(stepIndexes(*reader), (std::vector<std::int64_t>{5, 6, 7, 8, 9}));
}

TEST(CaptureWindow, ACudaProfilerRangeWithoutGpuTracingKeepsCompilesOnlyAndSaysWhy) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  const ProgramOutcome job = runWindowed(store, {"--capture-range", "cuda-profiler"}, "window_training.py", {"6"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  EXPECT_TRUE(rows<store::Step>(*reader).empty());
  EXPECT_GE(rows<store::Compile>(*reader).size(), 2u);
  const nlohmann::json window = windowOf(*reader);
  ASSERT_TRUE(window.is_object());
  EXPECT_EQ(window["mode"], "cuda-profiler");
  EXPECT_TRUE(window["intervals"].empty());
  bool said = false;
  for (const auto& diagnostic : rows<store::Diagnostic>(*reader)) {
    said = said || diagnostic.message.find("cudaProfilerStart") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

TEST(CaptureWindow, MalformedWindowSettingsRecordTheWholeRunWithAWarning) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  ProgramOptions options;
  options.env["TORCHSCOPE_WINDOW_STEPS"] = "7:3";
  const ProgramOutcome job =
      runUnderTorchscope(store, {TORCHSCOPE_PYTHON, scriptPath("window_training.py").string(), "5"}, options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_NE(job.err.find("TORCHSCOPE_WINDOW_STEPS=7:3"), std::string::npos) << job.err;
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  EXPECT_EQ(rows<store::Step>(*reader).size(), 5u);  // zero_grad() opens step 0, each step() ends one
  EXPECT_TRUE(windowOf(*reader).is_null());
}

TEST(StepsWithoutOptimizer, AManualUpdateLoopGetsItsStepsFromBackward) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  const ProgramOutcome job =
      runUnderTorchscope(store, {TORCHSCOPE_PYTHON, scriptPath("manual_update_lstm.py").string()});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  const auto steps = rows<store::Step>(*reader);
  ASSERT_EQ(steps.size(), 11u);  // 12 backward() calls: the first starts step 0
  for (const auto& step : steps) {
    EXPECT_EQ(step.source, "backward");
    EXPECT_LT(step.start_ns, step.end_ns);
  }
  const ProgramOutcome stats = runTorchscope("stats --format json " + store.string());
  EXPECT_EQ(nlohmann::json::parse(stats.out)["steps"], 11) << stats.out;
}

TEST(StepsWithoutOptimizer, AnOptimizerLoopKeepsItsOptimizerSteps) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  const ProgramOutcome job =
      runUnderTorchscope(store, {TORCHSCOPE_PYTHON, scriptPath("window_training.py").string(), "6"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  const auto steps = rows<store::Step>(*reader);
  ASSERT_EQ(steps.size(), 6u);  // zero_grad() opens step 0, each step() ends one
  for (const auto& step : steps) EXPECT_EQ(step.source, "optimizer");
}

// Once an optimizer has stepped, zero_grad() and backward() can never mark a step again: the bridge gives torch its
// own methods back, unless the job compiled before (Dynamo may have traced the wrappers and guard on them).
TEST(StepsWithoutOptimizer, TheWrappersThatCanNoLongerMarkStepsAreTakenOut) {
  for (const std::string variant : {"eager", "compiled"}) {
    SCOPED_TRACE(variant);
    const TempDir scratch;
    const fs::path store = scratch.path() / "run.db";
    const ProgramOutcome job =
        runUnderTorchscope(store, {TORCHSCOPE_PYTHON, scriptPath("step_wrappers.py").string(), variant});
    ASSERT_EQ(job.exit_code, 0) << job.err;
    const std::string after_optimizer =
        variant == "eager" ? "backward=torch zero_grad=torch" : "backward=bridge zero_grad=bridge";
    EXPECT_EQ(job.out,
              "start backward=bridge zero_grad=bridge\n"
              "manual update backward=bridge zero_grad=bridge\n"
              "optimizer " +
                  after_optimizer +
                  "\n"
                  "fork child backward=bridge zero_grad=bridge\n"
                  "parent " +
                  after_optimizer + "\n");
    auto reader = openStore(store);
    ASSERT_TRUE(reader);
    std::vector<std::string> sources;
    for (const auto& step : rows<store::Step>(*reader)) sources.push_back(step.source);
    // Three backward() calls end two steps; the optimizer's first zero_grad() starts its first step.
    EXPECT_EQ(sources, (std::vector<std::string>{"backward", "backward", "optimizer", "optimizer", "optimizer"}));
  }
}

}  // namespace
}  // namespace torchscope::testing
