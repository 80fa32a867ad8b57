// Golden tests of the LibCST source fixes: golden/<fix-id>/input.py (+ optional `arg`) must give
// golden/<fix-id>/expected.diff. TORCHSCOPE_UPDATE_GOLDEN=1 rewrites the expected files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "torchscope/compiler/Process.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string rewriteDiff(const fs::path& case_dir, const std::string& fix) {
  const fs::path out = fs::temp_directory_path() / ("torchscope-golden-" + std::to_string(::getpid()) + ".diff");
  ProcessSpec spec;
  spec.argv = {TORCHSCOPE_PYTHON, "-m", "torchscope_compiler.rewrite", "--fix", fix, "input.py"};
  spec.environment["PYTHONPATH"] = TORCHSCOPE_SOURCE_DIR "/compiler/python";
  spec.working_directory = case_dir.string();
  spec.stdout_path = out.string();
  auto result = runProcess(spec);
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.ok() ? result->exit_code : -1, 0);
  std::string diff = readTextFile(out.string());
  fs::remove(out);
  return diff;
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
  const fs::path dir = fs::temp_directory_path() / ("torchscope-golden-bad-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "input.py") << "def broken(:\n";
  EXPECT_EQ(rewriteDiff(dir, "tensor-lr"), "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace torchscope::compiler
