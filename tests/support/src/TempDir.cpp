#include "torchscope/testing/TempDir.h"

#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace torchscope::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "torchscope-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
  path_ = pattern;
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace torchscope::testing
