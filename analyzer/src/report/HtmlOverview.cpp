// The HTML report's timeline overview: one time axis with lanes for the findings, steps, compilations (with their
// frame), graph breaks, recompiles and host memory, and GPU lanes when the run used a GPU. Pure SVG: the page runs
// no script; each finding's bar links to the finding and the finding links back to its bar.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

#include "Reports.h"

namespace torchscope::analyzer::report {

namespace {

constexpr double kLeft = 110;    // lane names
constexpr double kRight = 790;
constexpr double kChartWidth = 800;
constexpr double kLane = 18;
constexpr double kGap = 6;
constexpr double kMemoryHeight = 56;
constexpr double kAxisHeight = 24;
constexpr std::size_t kFindingRows = 6;

struct Plot {
  double duration_s = 1;
  [[nodiscard]] double x(double seconds) const {
    return kLeft + (kRight - kLeft) * std::clamp(seconds / duration_s, 0.0, 1.0);
  }
  [[nodiscard]] double width(double start_s, double end_s, double least) const {
    return std::max(least, x(end_s) - x(start_s));
  }
};

std::string laneName(double y, double height, std::string_view name) {
  return fmt::format("<text x=\"4\" y=\"{:.1f}\" font-size=\"11\" fill=\"#333\">{}</text>", y + height / 2 + 4, name);
}

// Ticks at 1, 2 or 5 times a power of ten, about eight over the run.
std::string timeAxis(const Plot& plot, double top, double bottom) {
  const double raw = plot.duration_s / 8;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * power;
    if (step >= raw) break;
  }
  std::string out;
  for (double t = 0; t <= plot.duration_s + step * 1e-9; t += step) {
    const double x = plot.x(t);
    out += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"#e0e0e0\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3:.1f}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#555\">{4:g} s</text>",
                       x, top, bottom, bottom + 14, t);
  }
  return out;
}

std::string spanBar(const Plot& plot, double y, double start_s, double end_s, std::string_view color, const std::string& tip) {
  return fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}</title></rect>",
                     plot.x(start_s), y, plot.width(start_s, end_s, 1), kLane, color, escapeXml(tip));
}

// On whole pixels, so that a 2-pixel mark stays sharp.
std::string tickMark(const Plot& plot, double y, double at_s, std::string_view color, const std::string& tip) {
  return fmt::format("<rect x=\"{:.0f}\" y=\"{:.1f}\" width=\"2\" height=\"{:.1f}\" fill=\"{}\"><title>{}</title></rect>",
                     std::round(plot.x(at_s)) - 1, y, kLane, color, escapeXml(tip));
}

const FindingPlace* placeOf(const RunSummary& run, const Finding& finding) {
  for (const auto& place : run.overview.findings) {
    if (place.rule == finding.rule && place.file == finding.file && place.line == finding.line &&
        place.function == finding.function) {
      return &place;
    }
  }
  return nullptr;
}

// Each finding's place as a numbered bar; bars that would overlap go on rows below (at most kFindingRows, the last
// taking the rest). Returns the bars and the rows they took.
std::pair<std::string, int> findingsLane(const Plot& plot, double top, const RunSummary& run, std::size_t run_index,
                                         const std::vector<Finding>& findings) {
  std::string out;
  std::vector<double> row_ends;  // where the last bar of each row ends
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const FindingPlace* place = placeOf(run, findings[i]);
    if (place == nullptr) continue;
    const double x = plot.x(place->start_s);
    const double width = plot.width(place->start_s, place->end_s, 14);
    std::size_t row = 0;
    while (row < row_ends.size() && row_ends[row] > x - 2 && row + 1 < kFindingRows) ++row;
    if (row == row_ends.size()) row_ends.push_back(0);
    row_ends[row] = std::max(row_ends[row], x + width);
    const double y = top + static_cast<double>(row) * kLane;
    out += fmt::format(
        "<a href=\"#finding-{0}\"><g id=\"{1}\" class=\"place\"><rect x=\"{2:.1f}\" y=\"{3:.1f}\" width=\"{4:.1f}\" "
        "height=\"{5:.1f}\" rx=\"3\" fill=\"#ffb300\" fill-opacity=\"0.55\" stroke=\"#e65100\"/><text x=\"{6:.1f}\" "
        "y=\"{7:.1f}\" font-size=\"11\" font-weight=\"bold\">{0}</text><title>{8}</title></g></a>",
        i + 1, placeId(run_index, i), x, y, width, kLane - 2, x + 3, y + 12,
        escapeXml(fmt::format("{}. {}: {}", i + 1, findings[i].rule.text(), findings[i].title)));
  }
  return {out, std::max<int>(1, static_cast<int>(row_ends.size()))};
}

// Compilations as bars, with their frame written in the bar when it fits.
std::string compilesLane(const Plot& plot, double y, const RunSummary& run) {
  std::string out;
  for (const auto& compile : run.overview.compiles) {
    out += spanBar(plot, y, compile.start_s, compile.end_s, "#8e24aa", compile.label);
    const double width = plot.width(compile.start_s, compile.end_s, 1);
    const std::string frame = compile.label.substr(0, compile.label.find(" ("));
    if (width > 7.0 * static_cast<double>(frame.size())) {
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#fff\">{}</text>",
                         plot.x(compile.start_s) + 3, y + 13, escapeXml(frame));
    }
  }
  return out;
}

// Host RSS over the run, scaled to the run's peak RSS: the figure of the memory table (the kernel's high-water mark
// can be above every sample).
std::string memoryLane(const Plot& plot, double y, const RunSummary& run) {
  double peak = std::max(1.0, static_cast<double>(run.memory.peak_rss_bytes));
  for (const auto& [at, bytes] : run.overview.host_rss) peak = std::max(peak, bytes);
  std::string points = fmt::format("{:.1f},{:.1f} ", plot.x(run.overview.host_rss.front().first), y + kMemoryHeight);
  for (const auto& [at, bytes] : run.overview.host_rss) {
    points += fmt::format("{:.1f},{:.1f} ", plot.x(at), y + kMemoryHeight - (kMemoryHeight - 4) * bytes / peak);
  }
  points += fmt::format("{:.1f},{:.1f}", plot.x(run.overview.host_rss.back().first), y + kMemoryHeight);
  return fmt::format("<polygon points=\"{}\" fill=\"#a5d6a7\" stroke=\"#2e7d32\"><title>host RSS, peak {}</title>"
                     "</polygon><text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#2e7d32\">peak {}</text>",
                     points, formatBytes(peak), kLeft + 4, y + 10, formatBytes(peak));
}

// GPU kernel time, CPU op time and time blocked in syncs per bucket of the run.
std::string gpuLanes(const Plot& plot, double y, const RunSummary& run) {
  double peak = 1e-12;
  for (const auto& bucket : run.timeline) peak = std::max({peak, bucket.gpu_busy_s, bucket.cpu_op_s, bucket.sync_s});
  const double width = run.duration_s / static_cast<double>(run.timeline.size());
  std::string out;
  const std::array<std::tuple<double TimelineBucket::*, const char*, const char*>, 3> lanes = {
      {{&TimelineBucket::gpu_busy_s, "#43a047", "GPU kernels"},
       {&TimelineBucket::cpu_op_s, "#1e88e5", "CPU ops"},
       {&TimelineBucket::sync_s, "#c62828", "host blocked in syncs"}}};
  for (const auto& [field, color, name] : lanes) {
    out += laneName(y, kLane, name);
    for (const auto& bucket : run.timeline) {
      const double height = kLane * std::min(1.0, bucket.*field / peak);
      if (height <= 0) continue;
      out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>",
                         plot.x(bucket.start_s), y + kLane - height, plot.width(bucket.start_s, bucket.start_s + width, 0.5),
                         height, color);
    }
    y += kLane + kGap;
  }
  return out;
}

}  // namespace

std::string placeId(std::size_t run_index, std::size_t finding_index) {
  return fmt::format("at-{}-{}", run_index + 1, finding_index + 1);
}

bool hasPlace(const RunSummary& run, const Finding& finding) { return placeOf(run, finding) != nullptr; }

std::string overviewChart(const RunSummary& run, std::size_t run_index, const std::vector<Finding>& findings) {
  const Plot plot{std::max(run.duration_s, 1e-9)};
  std::string body;
  double y = 4;
  const auto lane = [&](std::string_view name, const std::string& content, double height = kLane) {
    body += laneName(y, height, name) + content;
    y += height + kGap;
  };
  const auto [bars, rows] = findingsLane(plot, y, run, run_index, findings);
  lane("findings", bars, kLane * rows);
  std::string steps;
  for (std::size_t i = 0; i < run.overview.steps.size(); ++i) {
    const auto& step = run.overview.steps[i];
    steps += spanBar(plot, y, step.start_s, step.end_s, i % 2 == 0 ? "#64b5f6" : "#1565c0",
                  fmt::format("{}: {:.3f} s", step.label, step.end_s - step.start_s));
  }
  lane(fmt::format("steps ({})", run.overview.steps.size()), steps);
  lane(fmt::format("compiles ({})", run.overview.compiles.size()), compilesLane(plot, y, run));
  std::string breaks;
  for (const auto& mark : run.overview.graph_breaks) breaks += tickMark(plot, y, mark.at_s, "#ef6c00", mark.label);
  lane(fmt::format("graph breaks ({})", run.overview.graph_breaks.size()), breaks);
  std::string recompiles;
  for (const auto& mark : run.overview.recompiles) recompiles += tickMark(plot, y, mark.at_s, "#d81b60", mark.label);
  lane(fmt::format("recompiles ({})", run.overview.recompiles.size()), recompiles);
  if (!run.overview.host_rss.empty()) lane("host memory", memoryLane(plot, y, run), kMemoryHeight);
  if (run.kernels > 0 && !run.timeline.empty()) {
    body += gpuLanes(plot, y, run);
    y += 3 * (kLane + kGap);
  }
  const std::string grid = timeAxis(plot, 0, y);
  return fmt::format("<svg width=\"{0}\" height=\"{1:.0f}\" viewBox=\"0 0 {0} {1:.0f}\" role=\"img\" "
                     "aria-label=\"timeline overview\" class=\"overview\">{2}{3}</svg>\n",
                     kChartWidth, y + kAxisHeight, grid, body);
}

}  // namespace torchscope::analyzer::report
