// The line table as a report section (text, Markdown, JSON): shared by `advise` and `stats`.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "Reports.h"
#include "torchscope/analyzer/LineTable.h"
#include "torchscope/base/JsonText.h"
#include "torchscope/base/Settings.h"

namespace torchscope::analyzer {

namespace {

std::string lineMilliseconds(double seconds) { return fmt::format("{:.2f} ms", seconds * 1e3); }

std::string lineLabel(const LineTime& line) {
  return fmt::format("{}:{}{}", line.file, line.line, line.function.empty() ? "" : " (" + line.function + ")");
}

// "self/total": the samples that ended at the line and those that passed through it.
std::string lineSamples(const LineTime& line) { return fmt::format("{}/{}", line.self_samples, line.total_samples); }

// The samples a second of each thread's sampled time: the sampler's rate, lowered where its budget spread the ticks.
double samplesPerSecond(const LineTable& table) {
  return table.sampled_s > 0 ? static_cast<double>(table.samples) / table.sampled_s : 0.0;
}

// Under this many samples a share's 95 % margin is wider than 10 points: the table says so.
constexpr std::int64_t kFewSamples = 100;
// Under this many it is wider than 25 points: a share cannot tell a line that takes a quarter of the time from one
// that takes half, and the table says the shares mean little.
constexpr std::int64_t kTooFewSamples = 16;

// A share p from n samples: a 95 % margin of 1.96 * sqrt(p (1 - p) / n), widest at p = 1/2.
double shareMargin(const LineTable& table) {
  return 1.96 * std::sqrt(0.25 / static_cast<double>(std::max<std::int64_t>(table.samples, 1)));
}

// What the figures are taken over, as a sentence: the samples, how often they were taken (the sampler's rate, lowered
// where its budget spread the ticks), the steps, and how far a share can be trusted when the samples are few.
std::string lineScope(const LineTable& table) {
  const std::string span = sampledSpan(table.steps, table.unsampled_steady_steps);
  const std::string over = table.steps > 0
                               ? fmt::format("per step over {} of {} on average", span, lineMilliseconds(table.step_s))
                               : "over " + span;
  std::string scope = fmt::format(
      "{} sample(s) of {} thread(s) ({:.0f} a second), {}; {:.0f} % of the sampled time "
      "is in your code",
      table.samples, table.threads, samplesPerSecond(table), over,
      table.sampled_s > 0 ? table.user_s / table.sampled_s * 100 : 0.0);
  const std::string more =
      "a longer run samples more, as does a larger " + std::string(base::settings::kSampleBudget.name);
  if (table.samples > 0 && table.samples < kTooFewSamples) {
    scope += fmt::format("; only {} sample(s): too few for the shares to mean much (±{:.0f} points; {})", table.samples,
                         100 * shareMargin(table), more);
  } else if (table.samples > 0 && table.samples < kFewSamples) {
    scope +=
        fmt::format("; few samples: a share is known to about ±{:.0f} points ({})", 100 * shareMargin(table), more);
  }
  if (table.idle_samples > 0) {
    scope += fmt::format("; {} sample(s) of idle threads left out", table.idle_samples);
  }
  return scope;
}

// `run`: the store's name when the report covers several (a job's ranks or DataLoader workers each have a table).
std::string linesTextSection(const LineTable& table, const std::string& run) {
  const std::string of_run = run.empty() ? "" : " in " + run;
  std::string out = "\nTime by line of your code" + report::sanitizeUtf8(of_run) +
                    " (sampled): " + report::sanitizeUtf8(lineScope(table)) + "\n";
  out +=
      fmt::format("  {:>12} {:>12} {:>8} {:>8} {:>11}  {}\n", "self", "total", "self %", "total %", "samples", "line");
  for (const auto& line : table.lines) {
    out += fmt::format("  {:>12} {:>12} {:>7.1f}% {:>7.1f}% {:>11}  {}\n", lineMilliseconds(line.self_per_step_s),
                       lineMilliseconds(line.total_per_step_s), line.share * 100, line.total_share * 100,
                       lineSamples(line), report::sanitizeUtf8(lineLabel(line)));
  }
  return out;
}

std::string linesMarkdownSection(const LineTable& table, const std::string& run) {
  const std::string heading =
      run.empty() ? "### Time by line of your code" : "### Time by line of your code in " + report::escapeMarkdown(run);
  std::string out = heading + "\n\n" + report::escapeMarkdown(lineScope(table)) + ".\n\n";
  out += "| Line | Self | Total | Self share | Total share | Samples (self/total) |\n|---|---|---|---|---|---|\n";
  for (const auto& line : table.lines) {
    out += fmt::format("| {} | {} | {} | {:.1f} % | {:.1f} % | {} |\n", report::escapeMarkdown(lineLabel(line)),
                       lineMilliseconds(line.self_per_step_s), lineMilliseconds(line.total_per_step_s),
                       line.share * 100, line.total_share * 100, lineSamples(line));
  }
  return out + "\n";
}

}  // namespace

namespace report {

nlohmann::json linesJson(const LineTable& table) {
  nlohmann::json lines = nlohmann::json::array();
  for (const auto& line : table.lines) {
    lines.push_back({{"file", sanitizeUtf8(line.file)},
                     {"line", line.line},
                     {"function", sanitizeUtf8(line.function)},
                     {"self_seconds_per_step", line.self_per_step_s},
                     {"total_seconds_per_step", line.total_per_step_s},
                     {"share", line.share},
                     {"total_share", line.total_share},
                     {"self_seconds", line.self_s},
                     {"total_seconds", line.total_s},
                     {"self_cpu_seconds", line.self_cpu_s >= 0 ? nlohmann::json(line.self_cpu_s) : nlohmann::json()},
                     {"self_samples", line.self_samples},
                     {"total_samples", line.total_samples}});
  }
  return {{"samples", table.samples},
          {"samples_per_second", samplesPerSecond(table)},
          {"steps", table.steps},
          {"unsampled_steady_steps", table.unsampled_steady_steps},
          {"threads", table.threads},
          {"sampled_seconds", table.sampled_s},
          {"idle_samples", table.idle_samples},
          {"idle_seconds", table.idle_s},
          {"user_seconds", table.user_s},
          {"share_base_seconds", table.base_s},
          {"share_margin", table.samples > 0 ? nlohmann::json(shareMargin(table)) : nlohmann::json()},
          {"step_seconds", table.step_s},
          {"lines", lines}};
}

std::string linesText(const LineTable& table, const std::string& run) {
  return table.recorded ? linesTextSection(table, run) : "";
}
std::string linesMarkdown(const LineTable& table, const std::string& run) {
  return table.recorded ? linesMarkdownSection(table, run) : "";
}

}  // namespace report

std::string renderLines(const LineTable& table, Format format, const RenderOptions& options) {
  if (!table.recorded) return "";
  Analysis analysis;
  analysis.runs.emplace_back().lines = table;
  const Analysis readable_analysis = report::withReadablePaths(analysis, options);
  const LineTable& readable = readable_analysis.runs.front().lines;
  switch (format) {
    case Format::kText: return linesTextSection(readable, "");
    case Format::kMarkdown: return linesMarkdownSection(readable, "");
    case Format::kJson: return base::dumpJson(report::linesJson(table), 2) + "\n";
    default: return "";
  }
}

}  // namespace torchscope::analyzer
