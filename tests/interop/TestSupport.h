// Shared by the interop tests: temporary directories, corpus paths and a store's summary.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace torchscope::interop::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

std::string corpus(const std::string& relative);   // under shared/corpus/
std::string testData(const std::string& relative);  // under tests/interop/data/

// Row counts plus a few aggregates per kind of data, as the golden files hold them.
nlohmann::json summarizeStore(const std::string& store_path);

}  // namespace torchscope::interop::testing
