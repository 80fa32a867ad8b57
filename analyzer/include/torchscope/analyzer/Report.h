// Renders an Analysis in the formats users and their tools read. docs/rules.md documents the JSON
// schema; SARIF follows 2.1.0, JUnit the format CI servers parse. Renderers never fail: every
// string from the store is escaped for the target format.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "torchscope/analyzer/Analyzer.h"

namespace torchscope::analyzer {

enum class Format { kText, kJson, kMarkdown, kSarif, kJunit, kHtml };

// "text", "json", "markdown", "sarif", "junit", "html"; nullopt for anything else.
[[nodiscard]] std::optional<Format> parseFormat(std::string_view name);
inline constexpr std::string_view kFormatNames = "text|json|markdown|sarif|junit|html";

struct RenderOptions {
  bool color = false;  // ANSI colour in text output (only for a terminal)
  // Text, Markdown, HTML and JUnit reports show a path under `current_directory` relative to it, else one under its
  // run's job folder relative to that (and say so), as compilers do; any other path as recorded. JSON and SARIF keep
  // the recorded paths (SARIF as URIs). `absolute_paths`: every path as recorded.
  std::string current_directory;
  bool absolute_paths = false;
};

[[nodiscard]] std::string render(const Analysis& analysis, Format format, const RenderOptions& options = {});

// The line table (LineTable.h) as a report section: text, markdown or json (the `lines` object of docs/rules.md);
// "" for a table without samples and for the other formats.
[[nodiscard]] std::string renderLines(const LineTable& table, Format format, const RenderOptions& options = {});

// `text` with every path that starts with `folder`/ written relative to it ("/a/b.py" from "/a" is "b.py"; "/x/a/b.py"
// is left alone): what the reports above do for the current directory, for other texts (the fix command's report).
[[nodiscard]] std::string pathsRelativeTo(std::string_view text, const std::string& folder);

// "1.5 GiB", "320.0 MiB", "12.0 KiB", "512 B": byte counts in reports and commands.
[[nodiscard]] std::string formatBytes(double bytes);

// The JSON schema version written in every JSON report ("schema" key).
inline constexpr std::string_view kJsonSchema = "torchscope.findings/1";

}  // namespace torchscope::analyzer
