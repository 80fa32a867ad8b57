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

namespace {

// `name` is `stem[.rank<r>].<pid><extension>`.
bool isCompanionName(const std::string& name, const std::string& stem, const std::string& extension) {
  if (name.size() <= stem.size() + extension.size() + 1 || name.rfind(stem + ".", 0) != 0 ||
      name.compare(name.size() - extension.size(), extension.size(), extension) != 0) {
    return false;
  }
  std::string middle = name.substr(stem.size() + 1, name.size() - stem.size() - 1 - extension.size());
  if (middle.rfind("rank", 0) == 0) {
    const auto dot = middle.find('.');
    if (dot == std::string::npos || dot == 4) return false;
    for (std::size_t i = 4; i < dot; ++i) {
      if (middle[i] < '0' || middle[i] > '9') return false;
    }
    middle = middle.substr(dot + 1);
  }
  return !middle.empty() && std::all_of(middle.begin(), middle.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::vector<std::string> companionStores(const std::string& store_path) {
  const fs::path path(store_path);
  const std::string stem = path.stem().string();
  const std::string extension = path.has_extension() ? path.extension().string() : ".db";
  std::vector<fs::path> found;
  std::error_code error;
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file(error) && isCompanionName(name, stem, extension))
      found.push_back(path.parent_path() / name);
  }
  std::sort(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) {
    const std::string name_a = a.filename().string();
    const std::string name_b = b.filename().string();
    return std::make_tuple(rankInStoreName(name_a), name_a) < std::make_tuple(rankInStoreName(name_b), name_b);
  });
  std::vector<std::string> stores;
  for (const auto& store : found) stores.push_back(store.string());
  return stores;
}

std::vector<std::string> withCompanionStores(const std::vector<std::string>& paths, std::vector<std::string>* added) {
  const auto same = [](const std::string& a, const std::string& b) {
    std::error_code error;
    return fs::equivalent(a, b, error);
  };
  const auto listed = [&](const std::vector<std::string>& list, const std::string& path) {
    return std::any_of(list.begin(), list.end(), [&](const std::string& other) { return same(other, path); });
  };
  std::vector<std::string> all;
  for (const auto& path : paths) {
    if (!listed(all, path)) all.push_back(path);
    for (const auto& companion : companionStores(path)) {
      if (listed(all, companion) || listed(paths, companion)) continue;
      all.push_back(companion);
      if (added != nullptr) added->push_back(companion);
    }
  }
  return all;
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
