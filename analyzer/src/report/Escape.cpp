#include <fmt/format.h>

#include "Reports.h"

namespace torchscope::analyzer {

std::string sanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    if (byte < 0x80) {
      length = 1;
    } else if ((byte >> 5) == 0x6) {
      length = 2;
    } else if ((byte >> 4) == 0xE) {
      length = 3;
    } else if ((byte >> 3) == 0x1E) {
      length = 4;
    }
    bool valid = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
    if (!valid) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    if (length == 1 && byte < 0x20 && byte != '\n' && byte != '\t') {
      out += "\xEF\xBF\xBD";
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

std::string escapeXml(std::string_view raw) {
  const std::string text = sanitizeUtf8(raw);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string escapeMarkdown(std::string_view raw) {
  const std::string text = sanitizeUtf8(raw);
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "<br>";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else {
      if (std::string_view("\\`*_{}[]()#+-!|~").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
  return out;
}

}  // namespace torchscope::analyzer

namespace torchscope::analyzer::report {

std::string fileUri(std::string_view path) {
  const std::string text = sanitizeUtf8(path);
  std::string out = text.starts_with('/') ? "file://" : "";
  for (unsigned char c : text) {
    if (std::isalnum(c) || std::string_view("/-._~").find(static_cast<char>(c)) != std::string_view::npos) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string location(const Finding& finding) {
  if (finding.file.empty()) return finding.function;
  std::string where = finding.line >= 0 ? fmt::format("{}:{}", finding.file, finding.line) : finding.file;
  if (!finding.function.empty()) where += " (" + finding.function + ")";
  return where;
}

}  // namespace torchscope::analyzer::report
