// `torchscope fix` with a job whose Python environment is not torchscope's: the LibCST rewrite runs in torchscope's
// environment, and what the runs need is checked before the first one.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::testing {
namespace {

namespace fs = std::filesystem;

// A virtual environment of its own that sees the project's site-packages (torch) through a .pth file, with the
// modules in `blocked` made unimportable (None in sys.modules, set by a .pth line at start-up).
fs::path jobEnvironment(const fs::path& folder, const std::string& blocked) {
  const ProgramOutcome created =
      runShell("'" + std::string(TORCHSCOPE_PYTHON) + "' -m venv --without-pip '" + folder.string() + "' 2>&1");
  EXPECT_EQ(created.exit_code, 0) << created.out;
  const std::string site_of = " -c 'import site; print(site.getsitepackages()[0])'";
  const ProgramOutcome project = runShell("'" + std::string(TORCHSCOPE_PYTHON) + "'" + site_of);
  const ProgramOutcome own = runShell("'" + (folder / "bin" / "python").string() + "'" + site_of);
  const auto trimmed = [](std::string text) { return text.substr(0, text.find_last_not_of("\n") + 1); };
  std::ofstream(fs::path(trimmed(own.out)) / "project_site.pth") << trimmed(project.out) << "\n";
  std::ofstream(fs::path(trimmed(own.out)) / "_blocked.pth") << "import sys; sys.modules['" << blocked << "'] = None\n";
  return folder / "bin" / "python";
}

fs::path copyScript(const fs::path& folder) {
  const fs::path script = folder / "batch_sizes.py";
  fs::copy_file(fs::path(TORCHSCOPE_SOURCE_DIR) / "tests/compiler/scripts/batch_sizes.py", script);
  return script;
}

TEST(FixPreflight, JobEnvironmentWithoutLibcstStillGetsTheSourceForm) {
  TempDir dir;
  const fs::path python = jobEnvironment(dir.path() / "venv", "libcst");
  ASSERT_NE(runShell("'" + python.string() + "' -c 'import torch, libcst' 2>&1").exit_code, 0)
      << "the job's environment must lack LibCST";
  const fs::path script = copyScript(dir.path());
  const fs::path report_path = dir.path() / "report.json";
  const ProgramOutcome fixed =
      runTorchscope("fix --fixes dynamic-shapes --repetitions 2 --format json -o '" + report_path.string() + "' -- '" +
                    python.string() + "' '" + script.string() + "' 2>&1");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.out;
  EXPECT_EQ(fixed.out.find("No module named"), std::string::npos) << fixed.out;
  std::ifstream in(report_path);
  const auto report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object()) << fixed.out;
  ASSERT_EQ(report["fixes"].size(), 1U);
  // The dynamic-shapes fix's source form, made by the rewrite in torchscope's environment.
  EXPECT_NE(report["fixes"][0].value("diff", std::string()).find("dynamic=True"), std::string::npos)
      << report["fixes"][0].dump(2);
}

TEST(FixPreflight, AJobThatCannotImportTorchFailsBeforeTheFirstRun) {
  TempDir dir;
  const fs::path python = jobEnvironment(dir.path() / "venv", "torch");
  const fs::path script = copyScript(dir.path());
  const ProgramOutcome fixed = runTorchscope("fix --fixes dynamic-shapes --repetitions 2 -- '" + python.string() +
                                             "' '" + script.string() + "' 2>&1");
  EXPECT_NE(fixed.exit_code, 0) << fixed.out;
  EXPECT_NE(fixed.out.find("cannot run the job under fix"), std::string::npos) << fixed.out;
  EXPECT_NE(fixed.out.find("torch"), std::string::npos) << fixed.out;
  EXPECT_EQ(fixed.out.find("baseline"), std::string::npos) << "no run may start: " << fixed.out;
}

TEST(FixPreflight, AMisspeltFixOrSchemeIsRefusedBeforeTheFirstRun) {
  TempDir dir;
  const fs::path script = copyScript(dir.path());
  for (const char* fixes : {"quantize-dynamic:int4", "dynamic-shape"}) {
    const ProgramOutcome fixed = runTorchscope("fix --fixes " + std::string(fixes) + " --repetitions 2 -- '" +
                                               TORCHSCOPE_PYTHON + "' '" + script.string() + "' 2>&1");
    EXPECT_EQ(fixed.exit_code, 2) << fixed.out;
    EXPECT_NE(fixed.out.find(fixes), std::string::npos) << fixed.out;
    EXPECT_EQ(fixed.out.find("baseline"), std::string::npos) << "no run may start: " << fixed.out;
  }
}

}  // namespace
}  // namespace torchscope::testing
