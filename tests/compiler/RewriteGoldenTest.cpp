// Golden tests of the LibCST source fixes: golden/<fix-id>/input.py (+ optional `arg`) must give
// golden/<fix-id>/expected.diff. TORCHSCOPE_UPDATE_GOLDEN=1 rewrites the expected files.
// golden/<fix-id>/refused/ holds code a fix aimed at its lines must leave alone, each line with its
// one-line reason in expected.stderr.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "torchscope/compiler/Process.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// The diff the rewrite prints for case_dir/input.py; `messages` gets what it says on stderr.
std::string rewriteDiff(const fs::path& case_dir, const std::string& fix, std::string* messages = nullptr) {
  const torchscope::testing::TempDir dir;
  const fs::path out = dir.path() / "rewrite.diff";
  ProcessSpec spec;
  spec.argv = {TORCHSCOPE_PYTHON, "-m", "torchscope_compiler.rewrite", "--fix", fix, "input.py"};
  spec.environment["PYTHONPATH"] = TORCHSCOPE_SOURCE_DIR "/compiler/python";
  spec.working_directory = case_dir.string();
  spec.stdout_path = out.string();
  spec.stderr_path = (dir.path() / "rewrite.stderr").string();
  auto result = runProcess(spec);
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.ok() ? result->exit_code : -1, 0);
  if (messages != nullptr) *messages = readTextFile(spec.stderr_path);
  return readTextFile(out.string());
}

TEST(RewriteGolden, EveryFixMatchesItsExpectedDiff) {
  const bool update = std::getenv("TORCHSCOPE_UPDATE_GOLDEN") != nullptr;
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(TORCHSCOPE_COMPILER_TESTS) / "golden")) {
    if (!entry.is_directory()) continue;
    const fs::path dir = entry.path();
    std::string fix = dir.filename().string();
    if (fs::exists(dir / "arg")) fix += ":" + trimmed(readTextFile((dir / "arg").string()));
    const std::string diff = rewriteDiff(dir, fix);
    if (update) {
      std::ofstream(dir / "expected.diff", std::ios::trunc) << diff;
    } else {
      EXPECT_EQ(diff, readTextFile((dir / "expected.diff").string())) << "golden case " << dir;
    }
    EXPECT_FALSE(diff.empty()) << "the fix changes nothing in " << dir;
    ++cases;
  }
  EXPECT_GE(cases, 9);
}

// Branches: side effects, returns, attribute updates, names the branches do not share, a name with no
// value before the `if`, an `if` followed by `elif`s, a line without an `if`. `.item()`: a value used as
// a Python number, inside another call, assigned twice, a line without one. Attention: dropout on the weights,
// weights returned, softmax over another dim or with a dtype, a finite fill, a name rebound between the statements,
// scores kept, a softmax that is no attention, a line without one. Each left as it is, with why.
TEST(RewriteGolden, CodeAFixCannotRewriteIsNamedWithWhy) {
  for (const char* fix : {"remove-data-dependent-branch", "item-kept-as-tensor", "sdpa"}) {
    const fs::path dir = fs::path(TORCHSCOPE_COMPILER_TESTS) / "golden" / fix / "refused";
    std::string messages;
    EXPECT_EQ(rewriteDiff(dir, std::string(fix) + ":" + trimmed(readTextFile((dir / "arg").string())), &messages), "")
        << fix;
    EXPECT_EQ(messages, readTextFile((dir / "expected.stderr").string())) << fix;
  }
}

TEST(RewriteGolden, DataDependentBranchNeedsItsLineAndTorch) {
  const torchscope::testing::TempDir scratch;
  const fs::path& dir = scratch.path();
  std::ofstream(dir / "input.py") << "def f(x):\n    if x.sum() > 0:\n        x = -x\n    return x\n";
  std::string messages;
  EXPECT_EQ(rewriteDiff(dir, "remove-data-dependent-branch", &messages), "");
  EXPECT_NE(messages.find("needs the branch's FILE:LINE"), std::string::npos) << messages;
  EXPECT_EQ(rewriteDiff(dir, "remove-data-dependent-branch:input.py:2", &messages), "");
  EXPECT_NE(messages.find("input.py:2 left alone: torch is not imported"), std::string::npos) << messages;
  EXPECT_EQ(rewriteDiff(dir, "print-out-of-compiled:input.py:2", &messages), "");
  EXPECT_NE(messages.find("print-out-of-compiled: input.py:2 left alone: torch is not imported"), std::string::npos)
      << messages;
  // A finding of another file with the same line leaves this one alone, silently.
  EXPECT_EQ(rewriteDiff(dir, "remove-data-dependent-branch:other/input2.py:2", &messages), "");
  EXPECT_EQ(messages, "");
}

// Without the findings' lines sdpa rewrites every attention of the file, and names only the attention it leaves
// alone: a softmax that feeds no `@ v` (a classifier's) is not one.
TEST(RewriteGolden, SdpaWithoutLinesRewritesEveryAttentionOfTheFile) {
  const fs::path golden = fs::path(TORCHSCOPE_COMPILER_TESTS) / "golden" / "sdpa";
  std::string messages;
  EXPECT_EQ(rewriteDiff(golden, "sdpa", &messages), readTextFile((golden / "expected.diff").string()));
  EXPECT_EQ(messages, "");
  EXPECT_EQ(rewriteDiff(golden / "refused", "sdpa", &messages), "");
  EXPECT_EQ(messages.find("input.py:44"), std::string::npos) << messages;
  EXPECT_NE(messages.find("input.py:14 left alone: the attention weights `weights` go through `self.dropout`"),
            std::string::npos)
      << messages;
}

// The rewritten attention computes what the hand-written one did: each form of the golden input, called on the same
// weights and inputs before and after the rewrite, within float rounding (SDPA sums in another order).
TEST(RewriteGolden, SdpaComputesTheSameAttention) {
  const torchscope::testing::TempDir scratch;
  const fs::path golden = fs::path(TORCHSCOPE_COMPILER_TESTS) / "golden" / "sdpa";
  fs::copy_file(golden / "input.py", scratch.path() / "input.py");
  ProcessSpec rewrite;
  rewrite.argv = {TORCHSCOPE_PYTHON, "-m", "torchscope_compiler.rewrite", "--fix", "sdpa", "--in-place", "input.py"};
  rewrite.environment["PYTHONPATH"] = TORCHSCOPE_SOURCE_DIR "/compiler/python";
  rewrite.working_directory = scratch.path().string();
  rewrite.stdout_path = (scratch.path() / "rewrite.diff").string();
  ASSERT_TRUE(runProcess(rewrite).ok());
  ProcessSpec compare;
  compare.argv = {TORCHSCOPE_PYTHON, TORCHSCOPE_COMPILER_TESTS "/scripts/sdpa_equivalence.py",
                  (golden / "input.py").string(), (scratch.path() / "input.py").string()};
  compare.stdout_path = (scratch.path() / "differences.txt").string();
  compare.stderr_path = (scratch.path() / "differences.stderr").string();
  auto result = runProcess(compare);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->exit_code, 0) << readTextFile(compare.stderr_path);
  std::istringstream differences(readTextFile(compare.stdout_path));
  int forms = 0;
  for (std::string name, difference; differences >> name >> difference; ++forms) {
    EXPECT_LT(std::stod(difference), 1e-5) << name;
  }
  EXPECT_EQ(forms, 6);
}

TEST(RewriteGolden, WithoutOutputSizeRepeatInterleaveIsLeftAlone) {
  EXPECT_EQ(rewriteDiff(fs::path(TORCHSCOPE_COMPILER_TESTS) / "golden" / "repeat-interleave-output-size",
                        "repeat-interleave-output-size"),
            "");
}

TEST(RewriteGolden, UnparsableFilesAreSkipped) {
  const torchscope::testing::TempDir scratch;
  const fs::path& dir = scratch.path();
  std::ofstream(dir / "input.py") << "def broken(:\n";
  EXPECT_EQ(rewriteDiff(dir, "tensor-lr"), "");
}

}  // namespace
}  // namespace torchscope::compiler
