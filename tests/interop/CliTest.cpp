// `torchscope import` and `torchscope export` through the real binary: exit codes and messages.
#include <gtest/gtest.h>

#include <fstream>

#include "TestSupport.h"
#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::interop {
namespace {

using testing::corpus;
using testing::ProgramOutcome;
using testing::TempDir;

// stdout and stderr together.
ProgramOutcome runCli(const std::string& arguments) { return testing::runTorchscope(arguments + " 2>&1"); }

TEST(InteropCli, ImportStatsExport) {
  TempDir dir;
  const ProgramOutcome imported =
      runCli("import " + corpus("torch_trace/simple_corrupted_json.log") + " -o " + dir.file("run.db"));
  ASSERT_EQ(imported.exit_code, 0) << imported.out;
  EXPECT_NE(imported.out.find("skipped 1 malformed"), std::string::npos) << imported.out;
  const ProgramOutcome stats = runCli("stats " + dir.file("run.db") + " --format json");
  ASSERT_EQ(stats.exit_code, 0) << stats.out;
  const auto counts = nlohmann::json::parse(stats.out, nullptr, false);
  ASSERT_FALSE(counts.is_discarded()) << stats.out;
  EXPECT_EQ(counts["compiles"], 1);
  EXPECT_EQ(counts["diagnostics"].size(), 1U);
  const ProgramOutcome exported = runCli("export " + dir.file("run.db") + " --format chrome -o " + dir.file("trace.json"));
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
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
    const ProgramOutcome outcome = runCli(arguments);
    EXPECT_EQ(outcome.exit_code, 2) << arguments << "\n" << outcome.out;
    EXPECT_FALSE(outcome.out.empty());
  }
  const ProgramOutcome unknown = runCli("import " + dir.file("notes.txt") + " -o " + dir.file("a.db"));
  EXPECT_EQ(std::count(unknown.out.begin(), unknown.out.end(), '\n'), 1) << unknown.out;
  EXPECT_NE(unknown.out.find("neither a TORCH_TRACE log nor a PyTorch profiler"), std::string::npos);
}

TEST(InteropCli, DirectoryOfRanks) {
  TempDir dir;
  const ProgramOutcome imported = runCli("import " + corpus("torch_trace/multi_rank_logs") + " -o " + dir.file("run.db"));
  ASSERT_EQ(imported.exit_code, 0) << imported.out;
  const auto counts = nlohmann::json::parse(runCli("stats " + dir.file("run.db") + " --format json").out, nullptr, false);
  EXPECT_EQ(counts["processes"], 4);
  EXPECT_EQ(counts["recompiles"], 20);
}

}  // namespace
}  // namespace torchscope::interop
