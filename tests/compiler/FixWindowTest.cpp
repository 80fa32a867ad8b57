// `torchscope fix --steps N`: a job that would run for 100,000 steps is measured over a window of
// warm-up + N steps, ended through its own exit path; a job that never steps runs whole.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "FixHarness.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;

int countOf(const std::string& text, const std::string& word) {
  int found = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + word.size())) ++found;
  return found;
}

// torch-compile cannot act on a job that compiles: only the first baseline run runs, which is what
// the window is about. Its own `finally` block, atexit handler and the file it writes are intact.
TEST_F(FixEndToEnd, ALongJobEndsCleanlyAfterTheWindow) {
  const fs::path script = copyScript("long_job.py");
  const auto report = fix({"--steps", "4", "--warmup-steps", "1", "--fixes", "torch-compile", "--keep-temp", "--",
                           TORCHSCOPE_PYTHON, script.string()});
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["window_steps"], 4);
  EXPECT_TRUE(report["window_reached"].get<bool>()) << report.dump(2);
  EXPECT_EQ(report["runs"], 1);
  const fs::path kept = keptRuns(report);
  ASSERT_FALSE(kept.empty()) << report.dump(2);
  const std::string out = readTextFile((kept / "runs" / "baseline-1" / "stdout.txt").string());
  fs::remove_all(kept);
  EXPECT_EQ(countOf(out, "loss="), 5) << out;  // the warm-up step and 4 more, each logged whole
  EXPECT_NE(out.find("finally: closed"), std::string::npos) << out;
  EXPECT_NE(out.find("atexit: done"), std::string::npos) << out;
  // The job's own file, written in its working directory and closed by its exit path.
  EXPECT_EQ(readTextFile((dir_ / "progress.txt").string()), "0\n1\n2\n3\n4\nfinally\n");
  const auto& metrics = report["baseline"]["metrics"];
  EXPECT_TRUE(metrics.contains("steady_step_cpu")) << metrics.dump();
  EXPECT_TRUE(metrics.contains("compile_cpu")) << metrics.dump();
  EXPECT_EQ(fixNamed(report, "torch-compile")["status"], "not run");
}

// No optimizer, no backward(): the window is never reached, so the run is the whole job, compared
// end to end as without --steps, and the report says so.
TEST_F(FixEndToEnd, AJobThatNeverStepsRunsWhole) {
  const fs::path script = dir_ / "no_steps.py";
  std::ofstream(script) << "for i in range(6):\n    print(f'eval {i} loss={0.5 / (i + 1):.4f}')\nprint('done')\n";
  const auto report =
      fix({"--steps", "2", "--fixes", "torch-compile", "--keep-temp", "--", TORCHSCOPE_PYTHON, script.string()});
  ASSERT_TRUE(report.is_object());
  EXPECT_FALSE(report["window_reached"].get<bool>());
  bool noted = false;
  for (const auto& note : report["notes"]) noted |= note.get<std::string>().find("ran whole") != std::string::npos;
  EXPECT_TRUE(noted) << report["notes"].dump();
  const fs::path kept = keptRuns(report);
  ASSERT_FALSE(kept.empty());
  const std::string out = readTextFile((kept / "runs" / "baseline-1" / "stdout.txt").string());
  fs::remove_all(kept);
  EXPECT_EQ(countOf(out, "loss="), 6) << out;
  EXPECT_NE(out.find("done"), std::string::npos);
  EXPECT_TRUE(report["baseline"]["metrics"].contains("end_to_end_cpu"));
}

}  // namespace
}  // namespace torchscope::compiler
