#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "Rules.h"
#include "Stats.h"
#include "torchscope/analyzer/CaptureWindow.h"
#include "torchscope/analyzer/FixIds.h"
#include "torchscope/analyzer/RuleTable.h"
#include "torchscope/base/JsonText.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/base/SteadyState.h"

namespace torchscope::analyzer {

namespace {

constexpr std::size_t kMinStepsForWarmup = 3;  // a shorter run keeps its first step

}  // namespace

std::int64_t Facts::count(const std::string& table) const {
  const auto found = counts.find(table);
  return found == counts.end() ? 0 : found->second;
}

std::set<std::int64_t> Facts::steadyStepIndices() const {
  std::set<std::int64_t> indices;
  for (const std::size_t position : steady_steps) indices.insert(steps[position].index);
  return indices;
}

double Facts::fraction(double seconds) const {
  if (duration_s <= 0) return 0;
  return std::clamp(seconds / duration_s, 0.0, 1.0);
}

double Facts::windowFraction(double seconds) const {
  const double span = window_s > 0 ? window_s : duration_s;
  if (span <= 0) return 0;
  return std::clamp(seconds / span, 0.0, 1.0);
}

Result<Facts> collectFacts(const store::Reader& reader) {
  Facts facts;
  auto run = reader.run();
  if (!run) return run.error();
  facts.run = *run;
  facts.partial = run->end_ns < 0;
  auto counts = reader.counts();
  if (!counts) return counts.error();
  facts.counts = std::move(*counts);
  facts.begin_ns = run->start_ns;
  facts.end_ns = run->end_ns;
  // The span of the rows costs a pass over every table: only for runs that did not record their own span.
  if (run->start_ns <= 0 || run->end_ns < run->start_ns) {
    auto span = reader.timeSpan();
    if (!span) return span.error();
    if (*span) {
      facts.begin_ns = run->start_ns > 0 ? std::min(run->start_ns, (*span)->begin_ns) : (*span)->begin_ns;
      facts.end_ns = std::max(run->end_ns, (*span)->end_ns);
    } else {
      facts.begin_ns = std::max<base::Nanos>(0, run->start_ns);
      facts.end_ns = facts.begin_ns;
    }
  }
  facts.duration_s = toSeconds(static_cast<double>(base::spanNanos(facts.begin_ns, facts.end_ns)));
  const CaptureWindow window = captureWindowOf(reader);
  if (!window.whole()) facts.window_s = std::min(window.open_seconds, facts.duration_s);

  auto steps = reader.load<store::Step>();
  if (!steps) return steps.error();
  facts.steps = std::move(*steps);
  auto compiles = reader.load<store::Compile>();
  if (!compiles) return compiles.error();
  facts.compiled = !compiles->empty();
  auto recompiles = reader.load<store::Recompile>();
  if (!recompiles) return recompiles.error();
  facts.recompiles = std::move(*recompiles);
  facts.compile_seconds = compileWallSeconds(*compiles);

  auto census = loadOpCensus(reader);
  if (!census) return census.error();
  facts.census = std::move(*census);

  // Steady state (base/SteadyState.h): steps that no compilation overlaps, and never the first of three or more
  // (warm-up), unless a capture window began later in the run (its first step is not the job's first). The op
  // census's span counts as a compilation: the step it counted op by op and the step its work ran in are slower.
  const bool first_is_jobs_first = window.whole() || (!facts.steps.empty() && facts.steps.front().index == 0);
  std::vector<bool> left_out = base::compilingSteps(facts.steps, *compiles);
  if (facts.census) {
    const std::vector<OpCensus> census_span{*facts.census};
    const std::vector<bool> counted = base::compilingSteps(facts.steps, census_span);
    for (std::size_t i = 0; i < left_out.size(); ++i) left_out[i] = left_out[i] || counted[i];
  }
  facts.steady_steps = base::steadyStepPositions(left_out, {.warmup_steps = first_is_jobs_first ? 1U : 0U,
                                                            .min_steps_for_warmup = kMinStepsForWarmup,
                                                            .all_compiling_fallback = false});
  for (const std::size_t position : facts.steady_steps) {
    const auto& step = facts.steps[position];
    facts.steady_step_seconds.push_back(toSeconds(static_cast<double>(base::spanNanos(step.start_ns, step.end_ns))));
  }
  facts.steady_step_median_s = median(facts.steady_step_seconds);
  for (const double seconds : facts.steady_step_seconds) facts.steady_step_total_s += seconds;
  if (!facts.steady_steps.empty()) {
    facts.steady_begin_ns = facts.steps[facts.steady_steps.front()].start_ns;
    facts.steady_end_ns = facts.steps[facts.steady_steps.back()].end_ns;
  } else {
    facts.steady_begin_ns = facts.begin_ns;
    facts.steady_end_ns = facts.end_ns;
  }

  facts.compiles = std::move(*compiles);

  auto devices = reader.load<store::Device>();
  if (!devices) return devices.error();
  for (const auto& device : *devices) facts.compute_major[device.device] = device.compute_major;

  if (auto scanned = scanActivity(reader, facts); !scanned) return scanned.error();

  const bool optimizer_steps = std::any_of(facts.steps.begin(), facts.steps.end(),
                                           [](const auto& step) { return step.source == "optimizer"; });
  const bool backward_ops = std::any_of(facts.cpu_op_names.begin(), facts.cpu_op_names.end(), [](const auto& op) {
    return containsAny(op.name, {"Backward", "autograd::engine", "Optimizer.step"});
  });
  facts.training = optimizer_steps || backward_ops;
  return facts;
}

double compileSeconds(const Facts& facts, std::int64_t pid, std::int64_t frame_id, std::int64_t frame_compile_id) {
  double seconds = 0;
  for (const auto& compile : facts.compiles) {
    if (compile.pid == pid && compile.frame_id == frame_id && compile.frame_compile_id == frame_compile_id) {
      seconds += toSeconds(static_cast<double>(base::spanNanos(compile.start_ns, compile.end_ns)));
    }
  }
  return seconds;
}

std::int64_t distinctShapes(const Facts& facts) {
  static const std::regex kSizes(R"((expected|actual) (\d+))");
  std::set<std::string> sizes;
  for (const auto& recompile : facts.recompiles) {
    if (recompile.cause != "dynamic-shape") continue;
    for (std::sregex_iterator it(recompile.guard_failures.begin(), recompile.guard_failures.end(), kSizes), end;
         it != end; ++it) {
      sizes.insert((*it)[2].str());
    }
  }
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(sizes.size()));
}

std::int64_t firstSteadyStep(const Facts& facts) {
  for (const auto& step : facts.steps) {
    if (step.start_ns >= facts.steady_begin_ns) return step.index;
  }
  return 0;
}

Finding makeFinding(RuleId rule, Severity severity, std::string title, std::string message, const FixProposal& fix) {
  Finding finding;
  finding.rule = rule;
  finding.severity = severity;
  finding.title = std::move(title);
  finding.message = std::move(message);
  finding.fix_id = std::string(fix.id);
  finding.fix_summary = fix.summary;
  finding.fix_kind = std::string(analyzer::fix::kindOf(fix.id));
  return finding;
}

void setImpact(Finding& finding, const Facts& facts, double seconds) {
  finding.impact_seconds = std::max(0.0, seconds);
  // Compilations, graph breaks and recompiles are kept for the whole run; every other rule's figures come from the
  // capture window, so their share is of the time it was open (the same as the run's without a window).
  const RuleId rule = finding.rule;
  const bool whole_run = rule == "compile/time" || rule.family() == "graph-break" || rule.family() == "recompile";
  finding.impact_fraction =
      whole_run ? facts.fraction(finding.impact_seconds) : facts.windowFraction(finding.impact_seconds);
}

void setEvidence(Finding& finding, nlohmann::json evidence) { finding.evidence = std::move(evidence); }

std::string formatSeconds(double seconds) {
  if (seconds >= 1) return fmt::format("{:.2f} s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.1f} ms", seconds * 1e3);
  return fmt::format("{:.0f} us", seconds * 1e6);
}

std::string formatPercent(double fraction) { return fmt::format("{:.1f} %", fraction * 100); }

std::string formatLocation(const std::string& file, std::int64_t line) {
  if (file.empty()) return "";
  return line >= 0 ? fmt::format("{}:{}", file, line) : file;
}

Result<std::vector<std::string>> queryTexts(const store::Reader& reader, std::string_view sql,
                                            const std::vector<store::QueryParam>& params) {
  std::vector<std::string> values;
  auto done = reader.query(sql, [&](const store::Row& row) { values.push_back(row.text(0)); }, params);
  if (!done) return done.error();
  return values;
}

bool containsAny(std::string_view text, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view needle) { return text.find(needle) != std::string_view::npos; });
}

std::string lowercase(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

}  // namespace torchscope::analyzer
