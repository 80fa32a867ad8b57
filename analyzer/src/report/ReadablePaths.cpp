// Paths as a person reads them: relative to the current directory, or to the job's folder, when under it.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "Reports.h"

namespace torchscope::analyzer::report {

namespace {

bool isPathCharacter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::string_view("/._-~+@").find(c) != std::string_view::npos;
}

// `text` with every path that starts with `folder`/ written relative to it; counts the paths it shortened.
std::string relativeTo(std::string_view text, const std::string& folder, int& shortened) {
  const std::string prefix = folder + "/";
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = text.find(prefix); at != std::string_view::npos; at = text.find(prefix, at + 1)) {
    // Only a path that starts here: "/x/w/a.py" does not start with "/w/".
    if (at > 0 && isPathCharacter(text[at - 1])) continue;
    out.append(text.substr(from, at - from));
    from = at + prefix.size();
    ++shortened;
  }
  out.append(text.substr(from));
  return out;
}

std::string normalFolder(std::string folder) {
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  return folder;
}

// Every string value in `document` through `shorten` (keys are names, never paths).
template <class Shorten>
void shortenStrings(nlohmann::json& document, const Shorten& shorten) {
  if (document.is_string()) {
    shorten(document.get_ref<std::string&>());
  } else if (document.is_structured()) {
    for (auto& value : document) shortenStrings(value, shorten);
  }
}

std::string shortened(std::string text, const std::string& current) {
  int ignored = 0;
  return current.size() > 1 ? relativeTo(text, current, ignored) : text;
}

}  // namespace

}  // namespace torchscope::analyzer::report

namespace torchscope::analyzer {

std::string pathsRelativeTo(std::string_view text, const std::string& folder) {
  int ignored = 0;
  const std::string normal = report::normalFolder(folder);
  return normal.size() > 1 ? report::relativeTo(text, normal, ignored) : std::string(text);
}

}  // namespace torchscope::analyzer

namespace torchscope::analyzer::report {

Comparison withReadablePaths(const Comparison& comparison, const RenderOptions& options) {
  if (options.absolute_paths) return comparison;
  Comparison readable = comparison;
  const std::string current = normalFolder(options.current_directory);
  for (std::string* text : {&readable.base_path, &readable.new_path}) *text = shortened(*text, current);
  for (auto* problems : {&readable.new_problems, &readable.gone_problems}) {
    for (auto& problem : *problems) problem.file = shortened(problem.file, current);
  }
  for (auto* findings : {&readable.new_findings, &readable.gone_findings, &readable.changed_findings}) {
    for (auto& finding : *findings) {
      finding.file = shortened(finding.file, current);
      finding.title = shortened(finding.title, current);
    }
  }
  for (auto& note : readable.notes) note = shortened(note, current);
  return readable;
}

Analysis withReadablePaths(const Analysis& analysis, const RenderOptions& options) {
  if (options.absolute_paths) return analysis;
  Analysis readable = analysis;
  const std::string current = normalFolder(options.current_directory);
  std::vector<std::string> job_folders;
  for (const auto& run : analysis.runs) {
    const std::string folder = normalFolder(run.job_folder);
    if (folder.size() > 1 && folder != current && std::find(job_folders.begin(), job_folders.end(), folder) == job_folders.end()) {
      job_folders.push_back(folder);
    }
  }
  std::vector<std::string> used_job_folders;
  const auto shorten = [&](std::string& text) {
    // The current directory first: a path under both is shown as the user would type it from where they are.
    int ignored = 0;
    if (current.size() > 1) text = relativeTo(text, current, ignored);
    for (const auto& folder : job_folders) {
      int shortened = 0;
      text = relativeTo(text, folder, shortened);
      if (shortened > 0 && std::find(used_job_folders.begin(), used_job_folders.end(), folder) == used_job_folders.end()) {
        used_job_folders.push_back(folder);
      }
    }
  };
  for (auto& run : readable.runs) shorten(run.path);
  for (auto& note : readable.notes) shorten(note);
  for (auto& finding : readable.findings) {
    for (std::string* text : {&finding.file, &finding.title, &finding.message, &finding.fix_summary}) shorten(*text);
    shortenStrings(finding.evidence, shorten);
  }
  for (auto& run : readable.runs) {
    for (auto& place : run.overview.findings) shorten(place.file);
    for (auto& compile : run.overview.compiles) shorten(compile.label);
    for (auto& mark : run.overview.graph_breaks) shorten(mark.label);
    for (auto& mark : run.overview.recompiles) shorten(mark.label);
    for (auto& line : run.lines.lines) shorten(line.file);
    for (std::vector<FlameNode*> nodes{&run.flame.root}; !nodes.empty();) {
      FlameNode* node = nodes.back();
      nodes.pop_back();
      shorten(node->file);
      for (auto& child : node->children) nodes.push_back(&child);
    }
  }
  for (const auto& folder : used_job_folders) {
    readable.notes.push_back(fmt::format("paths of the job's files are relative to its folder {}", folder));
  }
  return readable;
}

}  // namespace torchscope::analyzer::report
