// The text report's first line: where the run's time went, in one sentence whose figures are the findings' own.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "Reports.h"

namespace torchscope::analyzer::report {

namespace {

std::string percent(double fraction) { return fmt::format("{:.1f} %", fraction * 100); }

double summedSeconds(const Analysis& analysis) {
  double seconds = 0;
  for (const auto& run : analysis.runs) seconds += run.duration_s;
  return seconds;
}

// Whether some runs overlapped: the processes of one job side by side, not runs one after the other (two runs given
// together), whose durations add up.
bool sideBySide(const Analysis& analysis) {
  return analysis.runs.size() > 1 && jobSpanSeconds(analysis.runs) < summedSeconds(analysis) * (1 - 1e-9);
}

std::string counted(std::size_t count, const char* thing) {
  return fmt::format("{} {}{}", count, thing, count == 1 ? "" : "s");
}

// What a job's processes are, as far as their stores tell: "the main one and 2 DataLoader workers", "4 ranks and
// 8 DataLoader workers"; "" when nothing tells them apart.
std::string processKinds(const Analysis& analysis) {
  std::size_t workers = 0, ranks = 0;
  for (const auto& run : analysis.runs) {
    if (isDataLoaderWorker(run)) {
      ++workers;
    } else if (run.rank >= 0) {
      ++ranks;
    }
  }
  const std::size_t others = analysis.runs.size() - workers - ranks;
  std::vector<std::string> kinds;
  if (ranks > 0) kinds.push_back(counted(ranks, "rank"));
  if (others > 0) kinds.push_back(others == 1 && ranks == 0 ? "the main one" : counted(others, "other process"));
  if (workers > 0) kinds.push_back(counted(workers, "DataLoader worker"));
  if (kinds.size() < 2) return "";
  std::string text;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == kinds.size() ? " and " : ", ") + kinds[i];
  }
  return text;
}

// "this 12.30 s run", "this 14.00 s job of 3 processes (the main one and 2 DataLoader workers)": the span the
// fractions of the findings of one process are of. Processes run side by side: the span is their union.
std::string runPhrase(const Analysis& analysis) {
  if (analysis.runs.size() == 1) return fmt::format("this {:.2f} s run", analysis.runs.front().duration_s);
  if (!sideBySide(analysis))
    return fmt::format("these {} runs ({:.2f} s in all)", analysis.runs.size(), summedSeconds(analysis));
  std::string phrase =
      fmt::format("this {:.2f} s job of {} processes", jobSpanSeconds(analysis.runs), analysis.runs.size());
  if (const std::string kinds = processKinds(analysis); !kinds.empty()) phrase += " (" + kinds + ")";
  return phrase;
}

// A finding found in several processes adds up their impacts: its fraction is of their times added up.
std::string spanOf(const Analysis& analysis, const Finding& finding) {
  const bool merged = finding.evidence.is_object() && finding.evidence.contains("stores");
  if (!merged || !sideBySide(analysis)) return runPhrase(analysis);
  return fmt::format("the {:.2f} s of process time of {}", summedSeconds(analysis), runPhrase(analysis));
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
                       spanOf(analysis, top), top.impact_seconds, described(top));
  }
  std::string sentence =
      fmt::format("{} of {} was torch.compile compiling ({:.2f} s)", percent(compile->impact_fraction),
                  spanOf(analysis, *compile), compile->impact_seconds);
  const Finding* recompile = mostImpact(analysis, [](RuleId rule) { return rule.family() == "recompile"; });
  if (recompile != nullptr && recompile->impact_seconds > 0 && compile->impact_seconds > 0) {
    sentence += fmt::format("; {} of that: {}",
                            percent(std::min(1.0, recompile->impact_seconds / compile->impact_seconds)),
                            described(*recompile));
  }
  return sentence + ".";
}

}  // namespace torchscope::analyzer::report
