#include "torchscope/store/RunFolder.h"

#include "torchscope/store/Files.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

namespace torchscope::store {

namespace fs = std::filesystem;

long long rankInStoreName(std::string_view file_name) {
  constexpr std::string_view kMarker = ".rank";
  const auto at = file_name.find(kMarker);
  if (at == std::string_view::npos) return -1;
  long long rank = 0;
  std::size_t i = at + kMarker.size();
  const std::size_t digits_begin = i;
  for (; i < file_name.size() && file_name[i] >= '0' && file_name[i] <= '9' && i < digits_begin + 12; ++i) {
    rank = rank * 10 + (file_name[i] - '0');
  }
  return i > digits_begin && i < file_name.size() && file_name[i] == '.' ? rank : -1;
}

Result<std::vector<std::string>> expandRunFolders(const std::vector<std::string>& paths) {
  std::vector<std::string> expanded;
  for (const auto& path : paths) {
    std::error_code error;
    if (!fs::is_directory(path, error)) {
      if (auto readable = checkInputFile(path); !readable) return readable.error();
      expanded.push_back(path);
      continue;
    }
    std::vector<fs::path> stores;
    for (const auto& entry : fs::directory_iterator(path, error)) {
      if (entry.is_regular_file(error) && entry.path().extension() == ".db") stores.push_back(entry.path());
    }
    if (error) return makeError(ErrorCode::kIo, path + ": cannot list the folder (" + error.message() + ")");
    if (stores.empty()) return makeError(ErrorCode::kNotFound, path + ": no torchscope store (*.db) in this folder");
    std::sort(stores.begin(), stores.end(), [](const fs::path& a, const fs::path& b) {
      const std::string name_a = a.filename().string();
      const std::string name_b = b.filename().string();
      return std::make_tuple(rankInStoreName(name_a), name_a) < std::make_tuple(rankInStoreName(name_b), name_b);
    });
    for (const auto& store : stores) expanded.push_back(store.string());
  }
  return expanded;
}

}  // namespace torchscope::store
