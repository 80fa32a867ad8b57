#include "torchscope/store/UserCode.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>

#include "torchscope/base/JsonText.h"

namespace torchscope::store {

namespace {

using nlohmann::json;

// Length of `root` when it contains `file` ("/a/b" contains "/a/b/c.py", not "/a/bc.py"), else 0.
std::size_t matchLength(std::string_view file, std::string_view root) {
  while (root.size() > 1 && root.back() == '/') root.remove_suffix(1);
  if (root.empty() || file.size() <= root.size() || file.substr(0, root.size()) != root) return 0;
  return file[root.size()] == '/' || root == "/" ? root.size() : 0;
}

std::size_t longestMatch(std::string_view file, const std::vector<std::string>& roots) {
  std::size_t longest = 0;
  for (const auto& root : roots) longest = std::max(longest, matchLength(file, root));
  return longest;
}

// Folders where programs write the code they generate (torch_geometric's module_from_template, jinja renders): a file
// right in one of them that no root claims is generated, not the user's. Only right in it: a project checked out
// under /tmp (a CI clone) is the user's.
constexpr std::array<std::string_view, 3> kTemporaryFolders = {"/tmp", "/var/tmp", "/dev/shm"};

bool rightInTemporaryFolder(std::string_view file) {
  return std::any_of(kTemporaryFolders.begin(), kTemporaryFolders.end(), [&](std::string_view folder) {
    return matchLength(file, folder) > 0 && file.find('/', folder.size() + 1) == std::string_view::npos;
  });
}

bool containsAny(std::string_view text, std::initializer_list<std::string_view> needles) {
  for (auto needle : needles) {
    if (text.find(needle) != std::string_view::npos) return true;
  }
  return false;
}

std::vector<std::string> stringArray(const std::string& text) {
  std::vector<std::string> values;
  const json parsed = base::parseJson(text);
  if (!parsed.is_array()) return values;
  for (const auto& value : parsed) {
    if (value.is_string() && !value.get_ref<const std::string&>().empty()) values.push_back(value.get<std::string>());
  }
  return values;
}

}  // namespace

bool CodeRoots::isUserFile(std::string_view file) const {
  if (file.empty() || file.front() == '<') return false;
  const std::size_t as_user = longestMatch(file, user);
  const std::size_t as_library = longestMatch(file, library);
  if (as_user > 0 || as_library > 0) return as_user >= as_library;
  if (containsAny(file, {"/site-packages/", "/dist-packages/"}) || rightInTemporaryFolder(file)) return false;
  return !library.empty() || !containsAny(file, {"/lib/python", "/torch/"});
}

CodeRoots codeRootsFrom(const std::vector<RunAttribute>& attributes) {
  CodeRoots roots;
  for (const auto& attribute : attributes) {
    if (attribute.key == kUserRootsAttribute) roots.user = stringArray(attribute.value);
    if (attribute.key == kLibraryRootsAttribute) roots.library = stringArray(attribute.value);
  }
  return roots;
}

std::string rootsJson(const std::vector<std::string>& roots) { return base::dumpJson(json(roots)); }

std::vector<SourceFrame> parseStack(std::string_view text) {
  std::vector<SourceFrame> frames;
  if (text.empty()) return frames;
  const json parsed = base::parseJson(text);
  if (!parsed.is_array()) return frames;
  for (const auto& entry : parsed) {
    if (!entry.is_object()) continue;
    SourceFrame frame;
    if (const auto file = entry.find("file"); file != entry.end() && file->is_string()) frame.file = file->get<std::string>();
    if (const auto line = entry.find("line"); line != entry.end() && line->is_number_integer()) {
      frame.line = line->get<std::int64_t>();
    }
    if (const auto function = entry.find("function"); function != entry.end() && function->is_string()) {
      frame.function = function->get<std::string>();
    }
    frames.push_back(std::move(frame));
  }
  return frames;
}

std::string stackJson(const std::vector<SourceFrame>& frames) {
  json array = json::array();
  for (const auto& frame : frames) array.push_back({{"file", frame.file}, {"line", frame.line}, {"function", frame.function}});
  return base::dumpJson(array);
}

const SourceFrame* innermostUserFrame(const std::vector<SourceFrame>& stack, const CodeRoots& roots) {
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    if (roots.isUserFile(it->file)) return &*it;
  }
  return nullptr;
}

}  // namespace torchscope::store
