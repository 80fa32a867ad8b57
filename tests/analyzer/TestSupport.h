// Helpers shared by the analyzer tests: where their fixtures and golden files are, and fixture stores.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "torchscope/testing/Golden.h"
#include "torchscope/testing/Paths.h"
#include "torchscope/testing/StoreFixtures.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::analyzer::testing {

using torchscope::testing::buildStore;
using torchscope::testing::corpusPath;
using torchscope::testing::expectMatchesGolden;
using torchscope::testing::expectMatchesTextGolden;
using torchscope::testing::sourcePath;
using torchscope::testing::TempDir;
using torchscope::testing::testNameOf;

inline std::filesystem::path fixtureDir() { return sourcePath("tests/analyzer/fixtures"); }
inline std::filesystem::path goldenDir() { return sourcePath("tests/analyzer/golden"); }

// The names of fixtures/*.json, sorted.
inline std::vector<std::string> fixtureNames() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(fixtureDir())) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Builds the store of fixtures/<name>.json in `dir` and returns its path (fails the test on error).
inline std::string fixtureStore(const TempDir& dir, const std::string& name) {
  const std::string store = dir.file(name + ".db");
  const std::string error = torchscope::testing::buildStoreFromFile((fixtureDir() / (name + ".json")).string(), store);
  EXPECT_EQ(error, "") << name;
  return store;
}

}  // namespace torchscope::analyzer::testing
