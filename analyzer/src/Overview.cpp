#include "Overview.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "Locations.h"
#include "torchscope/base/Saturating.h"

namespace torchscope::analyzer {

namespace {

constexpr std::size_t kMemoryPoints = 400;  // about one per two pixels of the report's axis

// Times of a store are any int64 (docs/reliability.md): the difference saturates, and a run whose duration is not
// a positive number puts everything at 0.
struct Axis {
  base::Nanos begin_ns = 0;
  double duration_s = 0;
  [[nodiscard]] double at(base::Nanos ns) const {
    return std::clamp(toSeconds(static_cast<double>(base::saturatingSub(ns, begin_ns))), 0.0,
                      std::max(0.0, duration_s));
  }
};

// The earliest start and latest end of the events a finding is about, on the axis.
struct Extent {
  std::optional<double> start_s;
  double end_s = 0;
  void add(double start, double end) {
    start_s = start_s ? std::min(*start_s, start) : start;
    end_s = std::max(end_s, end);
  }
};

bool sameLine(const std::string& file, std::int64_t line, const Finding& finding) {
  return !finding.file.empty() && file == finding.file && line == finding.line;
}

bool stackHas(const std::string& stack, const Finding& finding) {
  if (finding.file.empty() || stack.find(finding.file) == std::string::npos) return false;
  const auto frames = store::parseStack(stack);
  return std::any_of(frames.begin(), frames.end(),
                     [&](const auto& frame) { return sameLine(frame.file, frame.line, finding); });
}

// The rows of `rows` at the finding's location if any is, else all of them.
template <class Row, class Matches, class Span>
Extent extentOf(const std::vector<Row>& rows, const Matches& matches, const Span& span) {
  Extent at_location;
  Extent all;
  for (const Row& row : rows) {
    const auto [start, end] = span(row);
    all.add(start, end);
    if (matches(row)) at_location.add(start, end);
  }
  return at_location.start_s ? at_location : all;
}

std::string recompileLabel(const store::Recompile& recompile) {
  std::string label = fmt::format("recompile of `{}` ({})", recompile.co_name, recompile.cause.empty() ? "other" : recompile.cause);
  if (!recompile.cause_detail.empty()) label += ": " + recompile.cause_detail;
  return label;
}

}  // namespace

Result<Overview> buildOverview(const Context& context, const std::vector<Finding>& findings) {
  const Facts& facts = context.facts;
  const Axis axis{facts.begin_ns, facts.duration_s};
  Overview overview;
  for (const auto& step : facts.steps) {
    overview.steps.push_back({axis.at(step.start_ns), axis.at(step.end_ns), fmt::format("step {}", step.index)});
  }
  for (const auto& compile : facts.compiles) {
    overview.compiles.push_back({axis.at(compile.start_ns), axis.at(compile.end_ns),
                                 fmt::format("compile of `{}` ({}:{})", displayFunction(compile.co_name),
                                             compile.co_filename, compile.co_firstlineno)});
  }
  for (const auto& recompile : facts.recompiles) overview.recompiles.push_back({axis.at(recompile.ts_ns), recompileLabel(recompile)});
  std::vector<store::GraphBreak> breaks;
  if (facts.count("graph_breaks") > 0) {
    auto loaded = context.reader.load<store::GraphBreak>();
    if (!loaded) return loaded.error();
    breaks = std::move(*loaded);
  }
  for (const auto& row : breaks) {
    overview.graph_breaks.push_back({axis.at(row.ts_ns), fmt::format("graph break: {} at {}", row.break_type,
                                                                       formatLocation(row.file, row.line))});
  }
  std::vector<std::pair<double, double>> rss;
  auto sampled = context.reader.query("SELECT ts_ns, value FROM memory_samples WHERE series = 'host.rss' ORDER BY ts_ns",
                                      [&](const store::Row& row) {
                                        rss.emplace_back(axis.at(row.integer(0)), static_cast<double>(row.integer(1)));
                                      });
  if (!sampled) return sampled.error();
  // Thinned by keeping each stretch's highest sample, so that peaks stay on the curve.
  const std::size_t stride = std::max<std::size_t>(1, (rss.size() + kMemoryPoints - 1) / kMemoryPoints);
  for (std::size_t begin = 0; begin < rss.size(); begin += stride) {
    const auto end = rss.begin() + static_cast<std::ptrdiff_t>(std::min(begin + stride, rss.size()));
    overview.host_rss.push_back(*std::max_element(rss.begin() + static_cast<std::ptrdiff_t>(begin), end,
                                                  [](const auto& a, const auto& b) { return a.second < b.second; }));
  }

  std::vector<store::Sync> syncs;
  if (std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.rule.family() == "sync"; })) {
    auto loaded = context.reader.load<store::Sync>();
    if (!loaded) return loaded.error();
    syncs = std::move(*loaded);
  }
  for (const Finding& finding : findings) {
    const std::string_view family = finding.rule.family();
    Extent extent;
    if (finding.rule == "compile/time") {
      extent = extentOf(facts.compiles, [&](const store::Compile& c) { return sameLine(c.co_filename, c.co_firstlineno, finding); },
                        [&](const store::Compile& c) { return std::pair{axis.at(c.start_ns), axis.at(c.end_ns)}; });
    } else if (family == "recompile") {
      extent = extentOf(
          facts.recompiles,
          [&](const store::Recompile& r) {
            return sameLine(r.co_filename, r.co_firstlineno, finding) || sameLine(r.entry_file, r.entry_line, finding) ||
                   sameLine(r.value_file, r.value_line, finding) || stackHas(r.stack, finding);
          },
          [&](const store::Recompile& r) { return std::pair{axis.at(r.ts_ns), axis.at(r.ts_ns)}; });
    } else if (family == "graph-break") {
      extent = extentOf(
          breaks,
          [&](const store::GraphBreak& b) { return sameLine(b.file, b.line, finding) || stackHas(b.user_stack, finding); },
          [&](const store::GraphBreak& b) { return std::pair{axis.at(b.ts_ns), axis.at(b.ts_ns)}; });
    } else if (family == "sync") {
      extent = extentOf(syncs, [&](const store::Sync& s) { return sameLine(s.file, s.line, finding); },
                        [&](const store::Sync& s) { return std::pair{axis.at(s.start_ns), axis.at(s.end_ns)}; });
    }
    if (!extent.start_s) extent.add(axis.at(facts.steady_begin_ns), axis.at(facts.steady_end_ns));
    overview.findings.push_back({finding.rule, finding.file, finding.line, finding.function, *extent.start_s, extent.end_s});
  }
  return overview;
}

}  // namespace torchscope::analyzer
