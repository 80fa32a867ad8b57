#include "GraphBreakText.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <string>
#include <vector>

#include "torchscope/base/JsonText.h"

namespace torchscope::interop {

namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

bool startsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::int64_t toInt(std::string_view digits) {
  std::int64_t value = -1;
  const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return result.ec == std::errc() ? value : -1;
}

struct Frame {
  std::string file;
  std::int64_t line = -1;
  std::string function;
};

// `  File "/path/x.py", line 12, in fn`
bool parseFrameLine(std::string_view line, Frame& frame) {
  line = trim(line);
  if (!startsWith(line, "File \"")) return false;
  line.remove_prefix(6);
  const auto quote = line.find("\", line ");
  if (quote == std::string_view::npos) return false;
  frame.file = std::string(line.substr(0, quote));
  line.remove_prefix(quote + 8);
  const auto comma = line.find(", in ");
  frame.line = toInt(line.substr(0, comma));
  frame.function = comma == std::string_view::npos ? std::string() : std::string(trim(line.substr(comma + 5)));
  return true;
}

}  // namespace

void parseGraphBreakText(std::string_view payload, store::GraphBreak& out) {
  const auto lines = splitLines(payload);
  std::vector<Frame> stack;
  std::vector<std::string> hints;
  std::string reason;
  std::string last_reason_line;
  bool in_reason = false;
  bool in_user_stack = false;
  for (std::string_view raw : lines) {
    const std::string_view line = trim(raw);
    if (startsWith(line, "Graph break in user code at ")) {
      const std::string_view where = line.substr(28);
      const auto colon = where.rfind(':');
      if (colon != std::string_view::npos) {
        out.file = std::string(where.substr(0, colon));
        out.line = toInt(where.substr(colon + 1));
      }
      continue;
    }
    if (startsWith(line, "Graph Break Reason: ")) {
      in_reason = true;
      reason = std::string(line.substr(20));
      last_reason_line = reason;
      continue;
    }
    if (line == "User code traceback:" || startsWith(line, "The graph break occurred in the following user code")) {
      in_reason = false;
      in_user_stack = true;
      continue;
    }
    if (startsWith(line, "Traceback (most recent call last)") || startsWith(line, "==========")) {
      in_reason = false;
      in_user_stack = false;
      continue;
    }
    if (in_user_stack) {
      Frame frame;
      if (parseFrameLine(line, frame)) stack.push_back(std::move(frame));
      continue;
    }
    if (!in_reason) continue;
    if (startsWith(line, "Explanation: ")) {
      // unimplemented_v2 renders the gb_type on the line just above "Explanation:".
      if (out.break_type.empty()) out.break_type = last_reason_line;
      if (out.explanation.empty()) out.explanation = std::string(line.substr(13));
    } else if (startsWith(line, "Hint: ")) {
      hints.emplace_back(line.substr(6));
    }
    if (!line.empty()) last_reason_line = std::string(line);
    reason += "\n";
    reason += raw;
  }
  if (!reason.empty()) out.reason = std::string(trim(reason));
  out.frame_skipped = payload.find("Failed to handle graph break gracefully") != std::string_view::npos ||
                      payload.find("cannot properly resume from this graph break") != std::string_view::npos;
  if (const auto link = payload.find("/gb/gb"); link != std::string_view::npos) {
    const auto digits = payload.substr(link + 6, payload.find(".html", link) - link - 6);
    if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos) out.gb_id = "GB" + std::string(digits);
  }
  if (out.break_type.empty() && !reason.empty()) out.break_type = std::string(trim(reason.substr(0, reason.find('\n'))));
  if (!hints.empty()) out.hints = base::dumpJson(nlohmann::json(hints));
  if (!stack.empty()) {
    nlohmann::json frames = nlohmann::json::array();
    for (const auto& frame : stack) frames.push_back({{"file", frame.file}, {"line", frame.line}, {"function", frame.function}});
    out.user_stack = base::dumpJson(frames);
    // The importer does not know the job's user-code roots: the analyzer picks the user's frame from `stack`.
    out.stack = out.user_stack;
    const Frame& innermost = stack.back();
    if (out.file.empty()) {
      out.file = innermost.file;
      out.line = innermost.line;
    }
    // The innermost frame at the break's own line names the user's function.
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      if (it->file == out.file && it->line == out.line) {
        out.function = it->function;
        break;
      }
    }
    if (out.function.empty()) out.function = innermost.function;
  }
}

}  // namespace torchscope::interop
