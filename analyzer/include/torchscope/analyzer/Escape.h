// Escaping for reports: every string that comes from a store (kernel names, paths, messages) passes
// through one of these before it reaches an HTML, XML or Markdown output. Never throws.
#pragma once

#include <string>
#include <string_view>

namespace torchscope::analyzer {

// XML and HTML text and attributes: & < > " ' are escaped, invalid UTF-8 and control bytes replaced.
[[nodiscard]] std::string escapeXml(std::string_view text);
// Markdown table cells and inline text.
[[nodiscard]] std::string escapeMarkdown(std::string_view text);
// Replaces bytes that are not valid UTF-8 and control characters other than \n and \t.
[[nodiscard]] std::string sanitizeUtf8(std::string_view text);

}  // namespace torchscope::analyzer
