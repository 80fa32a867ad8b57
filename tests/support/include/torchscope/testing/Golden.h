// Golden files: a test's JSON result against the expected file kept in the repository. TORCHSCOPE_UPDATE_GOLDEN=1
// rewrites the file instead (the test is then reported as skipped).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace torchscope::testing {

// Fails the test when `actual` differs from the file `expected_file` (or the file is missing).
void expectMatchesGolden(const nlohmann::json& actual, const std::filesystem::path& expected_file);

// The same for text compared byte for byte (a rendered report): fails when `actual` differs from the file.
void expectMatchesTextGolden(const std::string& actual, const std::filesystem::path& expected_file);

// A golden case's name as a GoogleTest parameter name: every character but letters and digits becomes '_'.
std::string testNameOf(std::string name);

}  // namespace torchscope::testing
