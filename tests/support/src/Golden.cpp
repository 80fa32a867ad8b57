#include "torchscope/testing/Golden.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace torchscope::testing {

void expectMatchesGolden(const nlohmann::json& actual, const std::filesystem::path& expected_file) {
  const char* update = std::getenv("TORCHSCOPE_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::filesystem::create_directories(expected_file.parent_path());
    std::ofstream(expected_file) << actual.dump(2) << "\n";
    GTEST_SKIP() << "updated " << expected_file;
  }
  std::ifstream in(expected_file);
  ASSERT_TRUE(in) << "missing " << expected_file << " (run with TORCHSCOPE_UPDATE_GOLDEN=1)";
  const auto expected = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(expected.is_discarded()) << "invalid JSON in " << expected_file;
  EXPECT_EQ(actual.dump(2), expected.dump(2)) << expected_file << " no longer matches; review the change and update it";
}

void expectMatchesTextGolden(const std::string& actual, const std::filesystem::path& expected_file) {
  if (std::getenv("TORCHSCOPE_UPDATE_GOLDEN") != nullptr) {
    std::filesystem::create_directories(expected_file.parent_path());
    std::ofstream(expected_file, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << expected_file;
  }
  std::ifstream in(expected_file, std::ios::binary);
  ASSERT_TRUE(in) << expected_file << " is missing (TORCHSCOPE_UPDATE_GOLDEN=1 writes it)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "differs from " << expected_file;
}

std::string testNameOf(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

}  // namespace torchscope::testing
