#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "torchscope/compiler/Process.h"
#include "torchscope/compiler/Workspace.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;

TEST(Workspace, SplitsCommandLines) {
  EXPECT_EQ(splitCommandLine(R"(python train.py --name "a b" 'c d' e\ f)"),
            (std::vector<std::string>{"python", "train.py", "--name", "a b", "c d", "e f"}));
  EXPECT_EQ(splitCommandLine(R"(["python", "x y.py"])"), (std::vector<std::string>{"python", "x y.py"}));
  EXPECT_TRUE(splitCommandLine("").empty());
}

class WorkspaceFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "job" / "pkg");
    fs::create_directories(root_ / "job" / "__pycache__");
    std::ofstream(root_ / "job" / "train.py") << "print('hi')\n";
    std::ofstream(root_ / "job" / "pkg" / "model.py") << "x = 1\n";
    std::ofstream(root_ / "job" / "data.csv") << "1,2\n";
  }
  const torchscope::testing::TempDir scratch_;
  const fs::path& root_ = scratch_.path();
};

TEST_F(WorkspaceFiles, AnalyzesPythonJobs) {
  auto job = analyzeJob({"/usr/bin/python3", "-u", "-W", "ignore", "train.py", "--epochs", "2"}, root_ / "job");
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->script, fs::canonical(root_ / "job" / "train.py"));
  EXPECT_EQ(job->python_options, (std::vector<std::string>{"-u", "-W", "ignore"}));
  EXPECT_EQ(job->arguments, (std::vector<std::string>{"--epochs", "2"}));

  auto relative = analyzeJob({".venv/bin/python", "train.py"}, root_ / "job");
  ASSERT_TRUE(relative.ok());
  EXPECT_EQ(relative->python, (root_ / "job" / ".venv/bin/python").string());

  auto module = analyzeJob({"python", "-m", "pkg.model", "x"}, root_ / "job");
  ASSERT_TRUE(module.ok());
  EXPECT_EQ(module->module, "pkg.model");
  EXPECT_EQ(module->sourceRoot(), root_ / "job");
  EXPECT_EQ(module->rewriteRoot(), root_ / "job" / "pkg");
  EXPECT_EQ(job->rewriteRoot(), job->script.parent_path());

  EXPECT_FALSE(analyzeJob({"./train.sh"}, root_).ok());
  EXPECT_FALSE(analyzeJob({"python", "missing.py"}, root_ / "job").ok());
  EXPECT_FALSE(analyzeJob({"python", "-c", "print(1)"}, root_).ok());
  EXPECT_FALSE(analyzeJob({}, root_).ok());
}

TEST_F(WorkspaceFiles, CopiesSourcesAndLinksData) {
  auto job = analyzeJob({"python", "train.py"}, root_ / "job");
  ASSERT_TRUE(job.ok());
  const fs::path copy = root_ / "copy";
  ASSERT_TRUE(copyJobTree(*job, copy).ok());
  EXPECT_TRUE(fs::is_regular_file(copy / "train.py"));
  EXPECT_FALSE(fs::is_symlink(copy / "train.py"));
  EXPECT_TRUE(fs::is_symlink(copy / "data.csv"));
  EXPECT_FALSE(fs::exists(copy / "__pycache__"));
  EXPECT_EQ(pythonFiles(copy).size(), 2U);
  EXPECT_EQ(inCopy(*job, copy, job->script), copy / "train.py");
  EXPECT_EQ(inCopy(*job, copy, root_ / "job"), copy);
}

// A package reached through a linked folder (the demo's samples/ in the build tree) is copied, so
// that the copy imports it and a rewrite never edits the user's file through the link; a linked
// folder without Python (data) is linked whole; a loop of links is an error, not a hang.
TEST_F(WorkspaceFiles, CopiesLinkedPackagesAndLinksLinkedData) {
  fs::create_directories(root_ / "elsewhere" / "lib" / "sub");
  std::ofstream(root_ / "elsewhere" / "lib" / "sub" / "layer.py") << "y = 2\n";
  fs::create_directories(root_ / "datasets");
  std::ofstream(root_ / "datasets" / "rows.csv") << "1\n";
  fs::create_directory_symlink(root_ / "elsewhere" / "lib", root_ / "job" / "lib");
  fs::create_directory_symlink(root_ / "datasets", root_ / "job" / "data");
  auto job = analyzeJob({"python", "-m", "lib.sub.layer"}, root_ / "job");
  ASSERT_TRUE(job.ok());
  const fs::path copy = root_ / "copy";
  auto copied = copyJobTree(*job, copy);
  ASSERT_TRUE(copied.ok()) << copied.error().message;
  EXPECT_FALSE(fs::is_symlink(copy / "lib"));
  EXPECT_TRUE(fs::is_regular_file(copy / "lib" / "sub" / "layer.py"));
  EXPECT_FALSE(fs::is_symlink(copy / "lib" / "sub" / "layer.py"));
  EXPECT_TRUE(fs::is_symlink(copy / "data"));
  EXPECT_TRUE(fs::is_regular_file(copy / "data" / "rows.csv"));

  fs::create_directory_symlink(root_ / "job", root_ / "elsewhere" / "lib" / "loop");
  const auto looped = copyJobTree(*job, root_ / "copy-loop");
  ASSERT_FALSE(looped.ok());
  EXPECT_NE(looped.error().message.find("loop"), std::string::npos) << looped.error().message;
}

TEST_F(WorkspaceFiles, WriteBackKeepsBackups) {
  auto job = analyzeJob({"python", "train.py"}, root_ / "job");
  ASSERT_TRUE(job.ok());
  const fs::path copy = root_ / "copy";
  ASSERT_TRUE(copyJobTree(*job, copy).ok());
  std::ofstream(copy / "train.py", std::ios::trunc) << "print('fixed')\n";
  auto written = writeBack(*job, copy);
  ASSERT_TRUE(written.ok()) << written.error().message;
  ASSERT_EQ(written->size(), 1U);
  EXPECT_EQ(readTextFile((root_ / "job" / "train.py").string()), "print('fixed')\n");
  EXPECT_EQ(readTextFile((root_ / "job" / "train.py.torchscope.bak").string()), "print('hi')\n");
  EXPECT_EQ(readTextFile((root_ / "job" / "pkg" / "model.py").string()), "x = 1\n");
  // A second write keeps the first backup.
  std::ofstream(copy / "train.py", std::ios::trunc) << "print('again')\n";
  ASSERT_TRUE(writeBack(*job, copy).ok());
  EXPECT_EQ(readTextFile((root_ / "job" / "train.py.torchscope.bak").string()), "print('hi')\n");
  EXPECT_EQ(readTextFile((root_ / "job" / "train.py.torchscope.bak.1").string()), "print('fixed')\n");
}

TEST_F(WorkspaceFiles, WriteBackReplacesFilesWholeKeepingModeAndLinks) {
  // The user's script is executable and reached through a symlink; model.py is the link's target.
  const fs::path script = root_ / "job" / "train.py";
  fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  fs::create_directories(root_ / "shared");
  std::ofstream(root_ / "shared" / "model.py") << "x = 1\n";
  fs::remove(root_ / "job" / "pkg" / "model.py");
  fs::create_symlink(root_ / "shared" / "model.py", root_ / "job" / "pkg" / "model.py");
  auto job = analyzeJob({"python", "train.py"}, root_ / "job");
  ASSERT_TRUE(job.ok());
  const fs::path copy = root_ / "copy";
  ASSERT_TRUE(copyJobTree(*job, copy).ok());
  std::ofstream(copy / "train.py", std::ios::trunc) << "print('fixed')\n";
  fs::remove(copy / "pkg" / "model.py");
  std::ofstream(copy / "pkg" / "model.py") << "x = 2\n";

  auto written = writeBack(*job, copy);
  ASSERT_TRUE(written.ok()) << written.error().message;
  ASSERT_EQ(written->size(), 2U);
  EXPECT_EQ(readTextFile(script.string()), "print('fixed')\n");
  EXPECT_EQ(fs::status(script).permissions(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  EXPECT_TRUE(fs::is_symlink(root_ / "job" / "pkg" / "model.py"));
  EXPECT_EQ(readTextFile((root_ / "shared" / "model.py").string()), "x = 2\n");
  EXPECT_EQ(readTextFile((root_ / "job" / "pkg" / "model.py.torchscope.bak").string()), "x = 1\n");
  // Nothing but the files and their backups is left beside them.
  for (const fs::path& folder : {root_ / "job", root_ / "shared"}) {
    for (const auto& entry : fs::directory_iterator(folder)) {
      EXPECT_EQ(entry.path().filename().string().find(".torchscope.tmp"), std::string::npos) << entry.path();
    }
  }
}

TEST(Process, RunsWithEnvironmentAndReportsExitCodes) {
  const torchscope::testing::TempDir dir;
  const std::string out = dir.file("out.txt");
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "echo $TORCHSCOPE_PROBE; exit 3"};
  spec.environment["TORCHSCOPE_PROBE"] = "probe-value";
  spec.stdout_path = out;
  auto result = runProcess(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_EQ(readTextFile(out), "probe-value\n");
  spec.argv = {"sleep", "5"};
  spec.timeout = std::chrono::seconds(0);
  auto timed = runProcess(spec);
  ASSERT_TRUE(timed.ok());
  EXPECT_TRUE(timed->timed_out);
  EXPECT_EQ(timed->exit_code, 124);
  spec.argv = {"/nonexistent/binary"};
  spec.timeout = std::chrono::seconds(10);
  EXPECT_FALSE(runProcess(spec).ok());
}

}  // namespace
}  // namespace torchscope::compiler
