// The `torchscope` command as users run it: a real subprocess, its exit code and its output.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../store/TempDir.h"
#include "torchscope/store/Writer.h"

namespace torchscope {
namespace {

struct Outcome {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

Outcome runCli(const std::string& args) {
  const std::string command = std::string(TORCHSCOPE_CLI) + " " + args + " 2>&1";
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return outcome;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe)) outcome.out += buffer.data();
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

const char* kCommands[] = {"run", "advise", "fix", "compare", "stats", "import", "export", "gui", "demo", "optimize"};

TEST(Cli, EveryCommandHasHelp) {
  const Outcome top = runCli("--help");
  EXPECT_EQ(top.exit_code, 0);
  for (const char* command : kCommands) {
    EXPECT_THAT(top.out, ::testing::HasSubstr(command));
    const Outcome help = runCli(std::string(command) + " --help");
    EXPECT_EQ(help.exit_code, 0) << command << ": " << help.out;
    EXPECT_THAT(help.out, ::testing::HasSubstr("Usage:")) << command;
  }
}

TEST(Cli, Version) {
  const Outcome version = runCli("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.out, ::testing::StartsWith("torchscope "));
}

TEST(Cli, UnknownCommandIsUsageError) {
  const Outcome outcome = runCli("frobnicate");
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.out, ::testing::HasSubstr("unknown command 'frobnicate'"));
}

TEST(Cli, NoCommandIsUsageError) {
  const Outcome outcome = runCli("");
  EXPECT_EQ(outcome.exit_code, 2);
}

TEST(Cli, BadOptionIsUsageError) {
  const Outcome outcome = runCli("stats --format yaml x.db");
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.out, ::testing::HasSubstr("--format"));
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
  const Outcome outcome = runCli("stats " + path + " --format json");
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

TEST(Cli, StatsOnNonStoreIsUsageError) {
  testing::TempDir dir;
  std::ofstream(dir.file("notes.txt")) << "hello";
  const Outcome outcome = runCli("stats " + dir.file("notes.txt"));
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.out, ::testing::HasSubstr("not a torchscope store"));
  const Outcome missing = runCli("stats " + dir.file("missing.db"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.out, ::testing::HasSubstr("no such file"));
}

}  // namespace
}  // namespace torchscope
