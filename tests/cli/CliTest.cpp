// The `torchscope` command as users run it: a real subprocess, its exit code and its output.
#include <array>
#include <filesystem>
#include <fstream>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "torchscope/store/Writer.h"
#include "torchscope/testing/ExtremeStore.h"
#include "torchscope/testing/Paths.h"
#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope {
namespace {

using testing::ProgramOutcome;

// stdout and stderr together, as a user sees them.
ProgramOutcome runCommand(const std::string& command_line) { return testing::runShell(command_line + " 2>&1"); }

ProgramOutcome runCli(const std::string& args) { return testing::runTorchscope(args + " 2>&1"); }

std::string writeSmallStore(const testing::TempDir& dir) {
  const std::string path = dir.file("run.db");
  auto writer = store::Writer::open(path);
  EXPECT_TRUE(writer);
  if (!writer) return path;
  for (int i = 0; i < 3; ++i) {
    store::Kernel kernel;
    kernel.start_ns = 1'000'000 * (i + 1);
    kernel.end_ns = kernel.start_ns + 500'000;
    kernel.name = "kernel";
    (*writer)->add(kernel);
  }
  EXPECT_TRUE((*writer)->close(5'000'000));
  return path;
}

const char* kCommands[] = {"run", "advise", "fix", "compare", "stats", "import", "export", "gui", "demo", "optimize"};

TEST(Cli, EveryCommandHasHelp) {
  const ProgramOutcome top = runCli("--help");
  EXPECT_EQ(top.exit_code, 0);
  for (const char* command : kCommands) {
    EXPECT_THAT(top.out, ::testing::HasSubstr(command));
    const ProgramOutcome help = runCli(std::string(command) + " --help");
    EXPECT_EQ(help.exit_code, 0) << command << ": " << help.out;
    EXPECT_THAT(help.out, ::testing::HasSubstr("Usage:")) << command;
  }
}

TEST(Cli, Version) {
  const ProgramOutcome version = runCli("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.out, ::testing::StartsWith("torchscope "));
}

TEST(Cli, UnknownCommandIsUsageError) {
  const ProgramOutcome outcome = runCli("frobnicate");
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.out, ::testing::HasSubstr("unknown command 'frobnicate'"));
}

TEST(Cli, NoCommandIsUsageError) {
  const ProgramOutcome outcome = runCli("");
  EXPECT_EQ(outcome.exit_code, 2);
}

TEST(Cli, BadOptionIsUsageError) {
  const ProgramOutcome outcome = runCli("stats --format yaml x.db");
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.out, ::testing::HasSubstr("--format"));
}

TEST(Cli, RunChecksItsCaptureWindowBeforeStartingTheJob) {
  testing::TempDir dir;
  const std::string marker = dir.file("started");
  const std::array<std::pair<const char*, const char*>, 7> refused = {{
      {"--steps 5", "must be A:B"},
      {"--steps 9:3", "B must be greater than A"},
      {"--steps x:3", "whole number"},
      {"--delay -1", "--delay"},
      {"--duration nan", "--duration"},
      {"--capture-range nvtx", "--capture-range"},
      {"--steps 1:2 --signal-toggle", "excludes"},
  }};
  for (const auto& [options, message] : refused) {
    const ProgramOutcome outcome =
        runCli(std::string("run ") + options + " -o " + dir.file("run.db") + " -- touch " + marker);
    EXPECT_EQ(outcome.exit_code, 2) << options << ": " << outcome.out;
    EXPECT_THAT(outcome.out, ::testing::HasSubstr(message)) << options;
    EXPECT_FALSE(std::filesystem::exists(marker)) << options;
  }
  const ProgramOutcome help = runCli("run --help");
  for (const char* option : {"--steps", "--delay", "--duration", "--capture-range", "--signal-toggle"}) {
    EXPECT_THAT(help.out, ::testing::HasSubstr(option));
  }
  const ProgramOutcome accepted =
      runCli("run --delay 1 --duration 2.5 -o " + dir.file("run.db") + " -- touch " + marker);
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out;
  EXPECT_TRUE(std::filesystem::exists(marker));
}

TEST(Cli, StatsAndAdviseStateTheCaptureWindowOfTheirFigures) {
  testing::TempDir dir;
  const std::string path = writeSmallStore(dir);
  {
    auto writer = store::Writer::open(path, store::WriterOptions{store::OpenMode::kAppend});
    ASSERT_TRUE(writer);
    (*writer)->add(store::CaptureWindow{.pid = 1,
                                        .mode = "steps",
                                        .first_step = 100,
                                        .end_step = 150,
                                        .delay_s = 0,
                                        .duration_s = -1,
                                        .signal = "",
                                        .intervals = "[[1000000,4000000]]",
                                        .open_s = 0.003,
                                        .steps = 50,
                                        .first_kept_step = 100,
                                        .last_kept_step = 149});
    ASSERT_TRUE((*writer)->close());
  }
  const std::string expected =
      "window --steps 100:150 (steps 100-149, 50 steps, 3.0 ms open); compilations, graph "
      "breaks and recompiles: the whole run";
  EXPECT_THAT(runCli("stats " + path).out, ::testing::HasSubstr(expected));
  EXPECT_THAT(runCli("advise " + path).out, ::testing::HasSubstr(expected));
  // Markdown escapes its punctuation: "window \-\-steps 100:150 (steps 100\-149, ...".
  EXPECT_THAT(runCli("advise --format markdown " + path).out, ::testing::HasSubstr("steps 100\\-149, 50 steps"));
  EXPECT_THAT(runCli("advise --format html " + path).out, ::testing::HasSubstr("window --steps 100:150"));
  const nlohmann::json stats = nlohmann::json::parse(testing::runTorchscope("stats --format json " + path).out);
  EXPECT_EQ(stats["window"]["mode"], "steps");
  EXPECT_EQ(stats["window"]["description"], expected);
  const nlohmann::json advise = nlohmann::json::parse(testing::runTorchscope("advise --format json " + path).out);
  EXPECT_EQ(advise["runs"][0]["window"]["end_step"], 150);
  EXPECT_EQ(advise["runs"][0]["window"]["description"], expected);
  // A store without a window keeps its reports' shape.
  testing::TempDir other;
  const std::string whole = writeSmallStore(other);
  EXPECT_TRUE(nlohmann::json::parse(testing::runTorchscope("stats --format json " + whole).out)["window"].is_null());
  EXPECT_FALSE(
      nlohmann::json::parse(testing::runTorchscope("advise --format json " + whole).out)["runs"][0].contains("window"));
}

// Steps 100-102 of 10, 20 and 30 ms, in a store that says it holds a window from step 100, or none.
std::string writeStepsStore(const testing::TempDir& dir, bool windowed) {
  const std::string path = dir.file(windowed ? "window.db" : "whole.db");
  auto writer = store::Writer::open(path);
  EXPECT_TRUE(writer);
  if (!writer) return path;
  base::Nanos at = 1'000'000'000;
  for (int i = 0; i < 3; ++i) {
    store::Step step;
    step.index = 100 + i;
    step.start_ns = at;
    step.end_ns = at += (i + 1) * 10'000'000;
    step.source = "optimizer";
    (*writer)->add(step);
  }
  if (windowed) {
    (*writer)->add(store::CaptureWindow{.pid = 1,
                                        .mode = "steps",
                                        .first_step = 100,
                                        .end_step = 103,
                                        .delay_s = 0,
                                        .duration_s = -1,
                                        .signal = "",
                                        .intervals = "[[1000000000,1060000000]]",
                                        .open_s = 0.06,
                                        .steps = 3,
                                        .first_kept_step = 100,
                                        .last_kept_step = 102});
  }
  EXPECT_TRUE((*writer)->close(at));
  return path;
}

TEST(Cli, AWindowsFirstStepIsSteadyStateWhenTheWindowBeganLater) {
  testing::TempDir dir;
  const auto median = [](const std::string& path) {
    const nlohmann::json report = nlohmann::json::parse(testing::runTorchscope("advise --format json " + path).out);
    return report["runs"][0]["steady_step_median_seconds"].get<double>();
  };
  // Without a window the first step is the job's warm-up and is left out; a window's first step at 100 is not.
  EXPECT_NEAR(median(writeStepsStore(dir, false)), 0.025, 1e-9);
  EXPECT_NEAR(median(writeStepsStore(dir, true)), 0.020, 1e-9);
}

TEST(Cli, StatsJsonCountsEveryKind) {
  testing::TempDir dir;
  const std::string path = dir.file("run.db");
  {
    auto writer = store::Writer::open(path);
    ASSERT_TRUE(writer);
    for (int i = 0; i < 3; ++i) (*writer)->add(store::Kernel{});
    (*writer)->add(store::Step{});
    (*writer)->add(store::Recompile{});
    ASSERT_TRUE((*writer)->close());
  }
  const ProgramOutcome outcome = runCli("stats " + path + " --format json");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.out;
  const auto stats = nlohmann::json::parse(outcome.out);
  for (const char* key : {"kernels", "memcpy", "memset", "syncs", "api_calls", "nvtx", "compiles", "graph_breaks",
                          "recompiles", "steps", "findings"}) {
    ASSERT_TRUE(stats.contains(key)) << key;
  }
  EXPECT_EQ(stats["kernels"], 3);
  EXPECT_EQ(stats["steps"], 1);
  EXPECT_EQ(stats["recompiles"], 1);
  EXPECT_EQ(stats["syncs"], 0);
}

// A launcher's store given alone to a command that reads only what it is given: it names the ranks' stores beside it
// and how to read them, and still does its work on the one store.
TEST(Cli, StatsExportAndCompareNameTheStoresALaunchersJobWroteBesideIt) {
  testing::TempDir dir;
  const std::string launcher = writeSmallStore(dir);
  for (const char* rank : {"run.rank0.101.db", "run.rank1.102.db"})
    std::filesystem::copy_file(launcher, dir.file(rank));
  for (const std::string& command : {"stats " + launcher, "export " + launcher + " -o " + dir.file("trace.json"),
                                     "compare " + launcher + " " + launcher}) {
    const ProgramOutcome outcome = runCli(command);
    EXPECT_NE(outcome.exit_code, 2) << command << "\n" << outcome.out;
    EXPECT_THAT(outcome.out, ::testing::HasSubstr("is one of 3 stores its job wrote")) << command;
    EXPECT_THAT(outcome.out, ::testing::HasSubstr("run.rank0.101.db, run.rank1.102.db")) << command;
  }
  const ProgramOutcome rank = runCli("stats " + dir.file("run.rank1.102.db"));
  EXPECT_EQ(rank.exit_code, 0) << rank.out;
  EXPECT_THAT(rank.out, ::testing::Not(::testing::HasSubstr("stores its job wrote")));
}

// Text that is not UTF-8 (command line, diagnostics) and times and counts at the int64 edges: `stats --format json`
// replaces the bytes with U+FFFD instead of failing, and clamps the run's duration instead of overflowing.
TEST(Cli, StatsJsonReplacesTextThatIsNotUtf8AndClampsTheDuration) {
  testing::TempDir dir;
  const std::string path = dir.file("extreme.db");
  ASSERT_EQ(testing::writeExtremeValuesStore(path), "");
  const ProgramOutcome outcome = testing::runTorchscope("stats " + path + " --format json");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.out << outcome.err;
  const auto stats = nlohmann::json::parse(outcome.out, nullptr, false);
  ASSERT_FALSE(stats.is_discarded()) << outcome.out;
  const std::string replacement = "\xEF\xBF\xBD";  // U+FFFD
  EXPECT_THAT(stats["run"]["command_line"].get<std::string>(), ::testing::HasSubstr(replacement));
  bool replaced_diagnostic = false;
  for (const auto& diagnostic : stats["diagnostics"]) {
    replaced_diagnostic |= diagnostic["message"].get<std::string>().find(replacement) != std::string::npos &&
                           diagnostic["count"] == std::numeric_limits<std::int64_t>::max();
  }
  EXPECT_TRUE(replaced_diagnostic) << stats["diagnostics"].dump();
  // INT64_MIN + 1 to INT64_MAX: longer than any int64, clamped to INT64_MAX nanoseconds.
  EXPECT_NEAR(stats["run"]["duration_s"].get<double>(), 9223372036.854775807, 1e-3);
  const ProgramOutcome text = runCli("stats " + path);
  EXPECT_EQ(text.exit_code, 0) << text.out;
  EXPECT_THAT(text.out, ::testing::HasSubstr("memory (highest / last)"));
}

TEST(Cli, StatsOnNonStoreIsUsageError) {
  testing::TempDir dir;
  std::ofstream(dir.file("notes.txt")) << "hello";
  const ProgramOutcome outcome = runCli("stats " + dir.file("notes.txt"));
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.out, ::testing::HasSubstr("not a torchscope store"));
  const ProgramOutcome missing = runCli("stats " + dir.file("missing.db"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.out, ::testing::HasSubstr("no such file"));
}

// Every call pays for what the core loads: Qt and libtorch belong to torchscope-gui and torchscope-optimize.
TEST(Cli, CoreLinksNeitherQtNorLibtorch) {
  const ProgramOutcome libraries = runCommand("ldd " + testing::torchscopeExecutable().string());
  ASSERT_EQ(libraries.exit_code, 0) << libraries.out;
  EXPECT_THAT(libraries.out, ::testing::HasSubstr("libsqlite3"));
  for (const char* heavy : {"libQt6", "libtorch", "libc10"}) EXPECT_THAT(libraries.out, ::testing::Not(::testing::HasSubstr(heavy)));
}

TEST(Cli, GuiAndOptimizeWithoutTheirToolsSayWhatToBuild) {
  testing::TempDir dir;
  const std::filesystem::path alone = dir.path() / "torchscope";
  std::filesystem::copy_file(testing::torchscopeExecutable(), alone);
  const std::string store = writeSmallStore(dir);
  const ProgramOutcome gui = runCommand(alone.string() + " gui " + store);
  EXPECT_EQ(gui.exit_code, 1);
  EXPECT_THAT(gui.out, ::testing::HasSubstr("torchscope-gui is not installed beside this torchscope"));
  EXPECT_THAT(gui.out, ::testing::HasSubstr("--target torchscope-gui"));
  const ProgramOutcome optimize = runCommand(alone.string() + " optimize model.pt --input 1,3");
  EXPECT_EQ(optimize.exit_code, 1);
  EXPECT_THAT(optimize.out, ::testing::HasSubstr("--target torchscope-optimize"));
  // Help and usage errors need no tool.
  EXPECT_EQ(runCommand(alone.string() + " gui --help").exit_code, 0);
  EXPECT_EQ(runCommand(alone.string() + " optimize").exit_code, 2);
}

TEST(Cli, GuiRunsItsToolWithTheArgumentsAfterTheCommand) {
  const std::filesystem::path tool = testing::torchscopeExecutable().parent_path() / "torchscope-gui";
  if (!std::filesystem::exists(tool)) GTEST_SKIP() << "built without Qt: no " << tool;
  testing::TempDir dir;
  const std::string store = writeSmallStore(dir);
  const std::string png = dir.file("timeline.png");
  const ProgramOutcome shot = runCli("gui " + store + " --screenshot " + png + " --size 640x480");
  ASSERT_EQ(shot.exit_code, 0) << shot.out;
  std::ifstream image(png, std::ios::binary);
  std::array<unsigned char, 24> header{};
  ASSERT_TRUE(image.read(reinterpret_cast<char*>(header.data()), header.size()));
  // PNG: the IHDR chunk's width and height, big-endian, at bytes 16 and 20.
  const auto word = [&](std::size_t at) {
    return (header[at] << 24) | (header[at + 1] << 16) | (header[at + 2] << 8) | header[at + 3];
  };
  EXPECT_EQ(word(16), 640);
  EXPECT_EQ(word(20), 480);
  const ProgramOutcome bad_size = runCli("gui " + store + " --screenshot " + png + " --size 10x10");
  EXPECT_EQ(bad_size.exit_code, 2);
  EXPECT_THAT(bad_size.out, ::testing::HasSubstr("--size must be WIDTHxHEIGHT"));
}

}  // namespace
}  // namespace torchscope
