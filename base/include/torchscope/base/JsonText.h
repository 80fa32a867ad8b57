// JSON text of documents that carry text from a store or a foreign file (kernel names, reasons,
// paths, command lines): bytes that are not UTF-8 are replaced with U+FFFD, where nlohmann::json's
// dump() would throw by default. Every JSON document torchscope writes out goes through it.
// JSON text from a store or a foreign file is parsed with parseJson(), which refuses documents nested
// too deeply for nlohmann::json: it parses iteratively, but copies, compares and dumps recursively.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace torchscope::base {

// `indent` as nlohmann::json::dump's: -1 for one line.
[[nodiscard]] inline std::string dumpJson(const nlohmann::json& document, int indent = -1) {
  return document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The deepest nesting of arrays and objects torchscope keeps (docs/interop.md, *Limits*). A Kineto
// trace's `args`, a graph break's hints or a finding's evidence are a few levels deep.
inline constexpr std::size_t kMaxJsonDepth = 256;

// Whether `text` nests arrays and objects deeper than `limit`, counting brackets outside strings.
[[nodiscard]] inline bool nestedDeeperThan(std::string_view text, std::size_t limit) {
  std::size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

// nlohmann::json::parse without exceptions: a document that does not parse, or nests deeper than
// kMaxJsonDepth, is discarded (is_discarded()).
[[nodiscard]] inline nlohmann::json parseJson(std::string_view text) {
  if (nestedDeeperThan(text, kMaxJsonDepth)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
}

}  // namespace torchscope::base
