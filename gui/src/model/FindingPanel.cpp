#include "torchscope/gui/FindingPanel.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "torchscope/base/Saturating.h"
#include "torchscope/gui/Text.h"

namespace torchscope::gui {

namespace {

// Source files bigger than this are not shown (a generated file, not the user's code).
constexpr std::uintmax_t kMaxSourceBytes = 8 << 20;

std::string experimentText(const store::FixExperiment& experiment) {
  std::string text = fmt::format("Measured by `torchscope fix` ({} runs each): {}.", experiment.repetitions,
                                 experiment.accepted ? "accepted" : "rejected");
  if (experiment.baseline_step_median_s > 0) {
    text += fmt::format(" Step median {} -> {}, speed-up {:.2f}x (95% CI {:.2f}-{:.2f}).",
                        formatDuration(base::saturatingCast(experiment.baseline_step_median_s * 1e9)),
                        formatDuration(base::saturatingCast(experiment.candidate_step_median_s * 1e9)),
                        experiment.speedup_median, experiment.speedup_ci_low, experiment.speedup_ci_high);
  }
  if (!experiment.reason.empty()) text += fmt::format(" {}", experiment.reason);
  if (!experiment.parity_ok) text += " Outputs differed from the original run.";
  return text;
}

}  // namespace

std::string findingText(const analyzer::Finding& finding, const std::vector<store::FixExperiment>& experiments) {
  std::string text =
      fmt::format("{} [{}, {}]\n", finding.title, finding.rule.text(), analyzer::severityName(finding.severity));
  const std::string location = sourceLocation(finding.file, finding.line);
  if (!location.empty()) {
    text += fmt::format("At {}{}\n", location, finding.function.empty() ? "" : fmt::format(" in {}()", finding.function));
  }
  if (!finding.message.empty()) text += fmt::format("\n{}\n", finding.message);
  if (finding.impact_seconds > 0) {
    text +=
        fmt::format("\nCost: {} ({:.1f}% of the run).\n",
                    formatDuration(base::saturatingCast(finding.impact_seconds * 1e9)), 100 * finding.impact_fraction);
  }
  if (!finding.fix_summary.empty()) {
    text += fmt::format("\nFix{}: {}\n", finding.fix_kind.empty() ? "" : fmt::format(" ({})", finding.fix_kind),
                        finding.fix_summary);
  }
  bool measured = false;
  for (const store::FixExperiment& experiment : experiments) {
    if (finding.fix_id.empty() || experiment.fix_id != finding.fix_id) continue;
    text += fmt::format("\n{}\n", experimentText(experiment));
    measured = true;
  }
  if (!finding.fix_id.empty() && !measured) text += "\nNot measured yet: run `torchscope fix` to apply and measure it.\n";
  return text;
}

SourceFile readSource(const std::string& file, std::int64_t line, const std::vector<std::string>& roots) {
  SourceFile source;
  source.path = file;
  source.line = line;
  if (file.empty()) {
    source.error = "the finding names no file";
    return source;
  }
  std::vector<std::filesystem::path> candidates{file};
  if (std::filesystem::path(file).is_relative()) {
    for (const std::string& root : roots) candidates.push_back(std::filesystem::path(root) / file);
  }
  std::error_code error;
  for (const auto& candidate : candidates) {
    if (!std::filesystem::is_regular_file(candidate, error)) continue;
    if (std::filesystem::file_size(candidate, error) > kMaxSourceBytes) continue;
    std::ifstream in(candidate);
    if (!in) continue;
    source.path = candidate.string();
    for (std::string text; std::getline(in, text);) source.lines.push_back(std::move(text));
    return source;
  }
  source.error = fmt::format("{} is not readable here", file);
  return source;
}

}  // namespace torchscope::gui
