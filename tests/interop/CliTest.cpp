// `torchscope import` and `torchscope export` through the real binary: exit codes and messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>

#include "TestSupport.h"

namespace torchscope::interop {
namespace {

using testing::corpus;
using testing::TempDir;

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

Outcome runCli(const std::string& arguments) {
  const std::string command = std::string(TORCHSCOPE_BINARY_DIR) + "/bin/torchscope " + arguments + " 2>&1";
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) outcome.output += buffer;
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

TEST(InteropCli, ImportStatsExport) {
  TempDir dir;
  const Outcome imported =
      runCli("import " + corpus("torch_trace/simple_corrupted_json.log") + " -o " + dir.file("run.db"));
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_NE(imported.output.find("skipped 1 malformed"), std::string::npos) << imported.output;
  const Outcome stats = runCli("stats " + dir.file("run.db") + " --format json");
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  const auto counts = nlohmann::json::parse(stats.output, nullptr, false);
  ASSERT_FALSE(counts.is_discarded()) << stats.output;
  EXPECT_EQ(counts["compiles"], 1);
  EXPECT_EQ(counts["diagnostics"].size(), 1U);
  const Outcome exported = runCli("export " + dir.file("run.db") + " --format chrome -o " + dir.file("trace.json"));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  std::ifstream file(dir.file("trace.json"));
  EXPECT_FALSE(nlohmann::json::parse(file, nullptr, false).is_discarded());
}

TEST(InteropCli, BadInputExitsWithTwoAndOneLine) {
  TempDir dir;
  std::ofstream(dir.file("notes.txt")) << "just text\n";
  for (const std::string& arguments :
       {"import " + dir.file("notes.txt") + " -o " + dir.file("a.db"), "import " + dir.file("missing.log") + " -o " + dir.file("b.db"),
        "export " + dir.file("notes.txt") + " -o " + dir.file("c.json"),
        "export " + dir.file("missing.db") + " -o " + dir.file("d.json"),
        "export " + corpus("kineto/cpu_only_rank34.json.gz") + " --format svg -o " + dir.file("e.json")}) {
    const Outcome outcome = runCli(arguments);
    EXPECT_EQ(outcome.exit_code, 2) << arguments << "\n" << outcome.output;
    EXPECT_FALSE(outcome.output.empty());
  }
  const Outcome unknown = runCli("import " + dir.file("notes.txt") + " -o " + dir.file("a.db"));
  EXPECT_EQ(std::count(unknown.output.begin(), unknown.output.end(), '\n'), 1) << unknown.output;
  EXPECT_NE(unknown.output.find("neither a TORCH_TRACE log nor a PyTorch profiler"), std::string::npos);
}

TEST(InteropCli, DirectoryOfRanks) {
  TempDir dir;
  const Outcome imported = runCli("import " + corpus("torch_trace/multi_rank_logs") + " -o " + dir.file("run.db"));
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  const auto counts = nlohmann::json::parse(runCli("stats " + dir.file("run.db") + " --format json").output, nullptr, false);
  EXPECT_EQ(counts["processes"], 4);
  EXPECT_EQ(counts["recompiles"], 20);
}

}  // namespace
}  // namespace torchscope::interop
