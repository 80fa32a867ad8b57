// Which source files are the user's own code, so that every finding can name a line the user can
// change. The collector records the job's roots as run attributes; the collector picks the user's
// frame at record time and the analyzer picks it again at analysis time, widened by the user.
// The Python bridge applies the same rule (collector/python/torchscope_bridge/parse.py CodeScope).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "torchscope/store/Records.h"

namespace torchscope::store {

// Run attributes holding the roots, each a JSON array of directories.
inline constexpr std::string_view kUserRootsAttribute = "code.user_roots";
inline constexpr std::string_view kLibraryRootsAttribute = "code.library_roots";

// A file is the user's when the longest root that contains it is a user root (a tie goes to the
// user, so that naming a library directory as user code widens it). A file under no root is the
// user's unless it lies in an installed-package folder (site-packages, dist-packages) or a temporary
// folder (/tmp, /var/tmp, /dev/shm: code a library generated, e.g. torch_geometric's templates); without
// library roots (imported traces) the standard library and torch's folder count as library too.
// Pseudo-files such as "<frozen runpy>" or "<string>" are never the user's.
struct CodeRoots {
  std::vector<std::string> user;     // the job's script folder, its sys.path[0], editable installs, --user-code
  std::vector<std::string> library;  // sys.prefix, site-packages, the standard library, torch, the bridge

  [[nodiscard]] bool isUserFile(std::string_view file) const;
  [[nodiscard]] bool empty() const { return user.empty() && library.empty(); }
};

// The roots a run recorded (empty when it recorded none).
[[nodiscard]] CodeRoots codeRootsFrom(const std::vector<RunAttribute>& attributes);
// A JSON array of strings, for the run attributes above.
[[nodiscard]] std::string rootsJson(const std::vector<std::string>& roots);

// One frame of a stored stack (docs/FORMAT.md: {"file", "line", "function"}, innermost last).
struct SourceFrame {
  std::string file;
  std::int64_t line = -1;
  std::string function;
  bool operator==(const SourceFrame&) const = default;
};

// The frames of a stack column; an empty vector for "", "[]" or text that is not a stack.
[[nodiscard]] std::vector<SourceFrame> parseStack(std::string_view json);
[[nodiscard]] std::string stackJson(const std::vector<SourceFrame>& frames);
// The innermost frame in the user's code, or nullptr.
[[nodiscard]] const SourceFrame* innermostUserFrame(const std::vector<SourceFrame>& stack, const CodeRoots& roots);

}  // namespace torchscope::store
