// A fresh directory per test (mkdtemp, so tests running side by side never share one), removed afterwards.
#pragma once

#include <filesystem>
#include <string>

namespace torchscope::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(TempDir&& other) noexcept;  // the moved-from object no longer owns (nor removes) the directory
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir& operator=(TempDir&&) = delete;

  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace torchscope::testing
