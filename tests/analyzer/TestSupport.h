// Helpers shared by the analyzer tests: scratch folders and fixture stores.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "FixtureLoader.h"

namespace torchscope::analyzer::testing {

inline std::filesystem::path sourceDir() { return TORCHSCOPE_SOURCE_DIR; }
inline std::filesystem::path fixtureDir() { return sourceDir() / "tests/analyzer/fixtures"; }
inline std::filesystem::path goldenDir() { return sourceDir() / "tests/analyzer/golden"; }

// A folder of its own for each test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    path_ = std::filesystem::temp_directory_path() / ("torchscope_analyzer_" + std::to_string(getpid()) + "_" + name);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Builds the store of fixtures/<name>.json in `dir` and returns its path (fails the test on error).
inline std::string fixtureStore(const ScratchDir& dir, const std::string& name) {
  const std::string store = dir.file(name + ".db");
  const std::string error = buildStoreFromFile((fixtureDir() / (name + ".json")).string(), store);
  EXPECT_EQ(error, "") << name;
  return store;
}

}  // namespace torchscope::analyzer::testing
