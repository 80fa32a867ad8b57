#include "torchscope/store/Classify.h"

#include <array>
#include <cctype>

namespace torchscope::store {

namespace {

bool contains(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

template <std::size_t N>
bool containsAny(std::string_view text, const std::array<std::string_view, N>& needles) {
  for (auto needle : needles) {
    if (contains(text, needle)) return true;
  }
  return false;
}

// "== 0.0047", "== 3", "== -1e-05": a guard on a Python number's value.
bool hasNumericEquality(std::string_view text) {
  for (std::size_t at = text.find("=="); at != std::string_view::npos; at = text.find("==", at + 2)) {
    std::size_t i = at + 2;
    while (i < text.size() && text[i] == ' ') ++i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    if (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
      // `len(x) == 3` guards a container's length: its cause is the container, not a scalar.
      const std::string_view before = text.substr(0, at);
      const std::size_t line_start = before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1;
      if (!contains(before.substr(line_start), "len(")) return true;
    }
  }
  return false;
}

}  // namespace

std::string classifyRecompile(std::string_view guard_failures) {
  static constexpr std::array<std::string_view, 4> kShape = {"size mismatch", "stride mismatch", ".size()[",
                                                             ".stride()["};
  static constexpr std::array<std::string_view, 9> kIdentity = {
      "___check_type_id", "___check_obj_id", "type(", "id(", " is ", "dtype mismatch", "device mismatch",
      "requires_grad mismatch", "dispatch key set mismatch"};
  if (containsAny(guard_failures, kShape)) return "dynamic-shape";
  if (hasNumericEquality(guard_failures)) return "python-scalar";
  if (containsAny(guard_failures, kIdentity)) return "type-or-identity";
  return "other";
}

bool isRecompileLimitHit(std::string_view message) {
  return contains(message, "recompile_limit") || contains(message, "cache_size_limit");
}

}  // namespace torchscope::store
