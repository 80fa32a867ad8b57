// The harness of the `torchscope fix` end-to-end tests: runs the built binary in a scratch folder.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "torchscope/compiler/Process.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::compiler {

class FixEndToEnd : public ::testing::Test {
 protected:
  std::filesystem::path copyScript(const std::string& name) {
    const std::filesystem::path target = dir_ / name;
    std::filesystem::copy_file(std::filesystem::path(TORCHSCOPE_COMPILER_TESTS) / "scripts" / name, target);
    return target;
  }

  // Runs `torchscope fix ARGS` and returns the JSON report; `expected_exit` is its exit code.
  nlohmann::json fix(std::vector<std::string> args, int expected_exit = 0,
                     const std::map<std::string, std::string>& environment = {}) {
    ProcessSpec spec;
    spec.argv = {TORCHSCOPE_BINARY_DIR "/bin/torchscope", "fix", "--format", "json", "-o",
                 (dir_ / "report.json").string()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.environment = environment;
    spec.environment["TORCHSCOPE_TEST_FIXES"] = "1";
    spec.working_directory = dir_.string();
    spec.stderr_path = (dir_ / "fix.stderr").string();
    auto result = runProcess(spec);
    EXPECT_TRUE(result.ok());
    EXPECT_EQ(result.ok() ? result->exit_code : -1, expected_exit) << readTextFile(spec.stderr_path);
    return nlohmann::json::parse(readTextFile((dir_ / "report.json").string()), nullptr, false);
  }

  // The folder of the runs, from the report's "runs kept in" note (--keep-temp).
  static std::filesystem::path keptRuns(const nlohmann::json& report) {
    for (const auto& note : report["notes"]) {
      const std::string text = note.get<std::string>();
      if (text.rfind("runs kept in ", 0) == 0) return text.substr(std::string("runs kept in ").size());
    }
    return {};
  }

  const torchscope::testing::TempDir scratch_;
  const std::filesystem::path& dir_ = scratch_.path();
};

inline const nlohmann::json& fixNamed(const nlohmann::json& report, const std::string& id) {
  for (const auto& fix : report["fixes"]) {
    if (fix["id"] == id) return fix;
  }
  static const nlohmann::json missing;
  ADD_FAILURE() << "no fix " << id << " in " << report.dump();
  return missing;
}

}  // namespace torchscope::compiler
