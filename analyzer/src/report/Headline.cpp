// The text report's first line: where the run's time went, in one sentence whose figures are the findings' own.
#include <fmt/format.h>

#include <algorithm>

#include "Reports.h"

namespace torchscope::analyzer::report {

namespace {

std::string percent(double fraction) { return fmt::format("{:.1f} %", fraction * 100); }

// "this 12.30 s run", "these 3 runs (40.00 s in all)": the span the findings' fractions are of.
std::string runPhrase(const Analysis& analysis) {
  if (analysis.runs.size() == 1) return fmt::format("this {:.2f} s run", analysis.runs.front().duration_s);
  double total = 0;
  for (const auto& run : analysis.runs) total += run.duration_s;
  return fmt::format("these {} runs ({:.2f} s in all)", analysis.runs.size(), total);
}

// The finding of most impact among those whose rule `picked` accepts.
template <class RulePicker>
const Finding* mostImpact(const Analysis& analysis, RulePicker picked) {
  const Finding* best = nullptr;
  for (const auto& finding : analysis.findings) {
    if (!picked(finding.rule)) continue;
    if (best == nullptr || finding.impact_seconds > best->impact_seconds) best = &finding;
  }
  return best;
}

// A title continues the sentence after a colon: "The code compiled ..." reads "the code compiled ...", while a
// leading acronym ("GPU idle ...", "CUDA graphs ...") keeps its case.
std::string continuingSentence(std::string title) {
  const auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  if (title.size() >= 2 && upper(title[0]) && !upper(title[1])) title[0] = static_cast<char>(title[0] - 'A' + 'a');
  return title;
}

// The title, with the finding's place when the title does not name it.
std::string described(const Finding& finding) {
  const std::string where = location(finding);
  const std::string title = continuingSentence(finding.title);
  if (where.empty() || (!finding.file.empty() && finding.title.find(finding.file) != std::string::npos)) return title;
  return fmt::format("{} ({})", title, where);
}

}  // namespace

std::string headline(const Analysis& analysis) {
  if (analysis.findings.empty()) return fmt::format("Nothing in {} needs attention.", runPhrase(analysis));
  const Finding& top = analysis.findings.front();  // most impact first
  const Finding* compile = mostImpact(analysis, [](RuleId rule) { return rule == "compile/time"; });
  const bool compile_led = compile != nullptr && (&top == compile || top.rule.family() == "recompile");
  if (!compile_led) {
    return fmt::format("{} of {} ({:.2f} s) is the top finding: {}.", percent(top.impact_fraction),
                       runPhrase(analysis), top.impact_seconds, described(top));
  }
  std::string sentence = fmt::format("{} of {} was torch.compile compiling ({:.2f} s)", percent(compile->impact_fraction),
                                     runPhrase(analysis), compile->impact_seconds);
  const Finding* recompile = mostImpact(analysis, [](RuleId rule) { return rule.family() == "recompile"; });
  if (recompile != nullptr && recompile->impact_seconds > 0 && compile->impact_seconds > 0) {
    sentence += fmt::format("; {} of that: {}",
                            percent(std::min(1.0, recompile->impact_seconds / compile->impact_seconds)),
                            described(*recompile));
  }
  return sentence + ".";
}

}  // namespace torchscope::analyzer::report
