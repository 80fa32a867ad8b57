// Golden tests of the LibCST source fixes: golden/<fix-id>/input.py (+ optional `arg`) must give
// golden/<fix-id>/expected.diff. TORCHSCOPE_UPDATE_GOLDEN=1 rewrites the expected files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "torchscope/compiler/Process.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string rewriteDiff(const fs::path& case_dir, const std::string& fix) {
  const torchscope::testing::TempDir dir;
  const fs::path out = dir.path() / "rewrite.diff";
  ProcessSpec spec;
  spec.argv = {TORCHSCOPE_PYTHON, "-m", "torchscope_compiler.rewrite", "--fix", fix, "input.py"};
  spec.environment["PYTHONPATH"] = TORCHSCOPE_SOURCE_DIR "/compiler/python";
  spec.working_directory = case_dir.string();
  spec.stdout_path = out.string();
  auto result = runProcess(spec);
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.ok() ? result->exit_code : -1, 0);
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
  EXPECT_GE(cases, 6);
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
