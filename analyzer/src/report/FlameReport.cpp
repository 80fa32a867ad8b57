// The HTML report's flame graph: the sampled stacks' tree (FlameGraph.h) as inline SVG, callers above their
// callees, each box as wide as its wall time, with a tooltip. Attributes only, no script and no stylesheet
// rule: the page stays self-contained and a report without samples stays as it was.
#include <fmt/format.h>

#include <algorithm>

#include "../Rules.h"
#include "Reports.h"
#include "torchscope/analyzer/LineTable.h"

namespace torchscope::analyzer::report {

namespace {

constexpr double kFlameWidth = 800;
constexpr int kFlameRow = 18;
constexpr double kFlameCharWidth = 6.6;  // of the 11px system font, on average

// Blue shades for the user's code, orange ones for torch and the libraries, grey for the root: the shade varies
// with the function's name so that neighbours stand apart.
std::string flameFill(const FlameNode& node, int depth) {
  if (depth == 0) return "#c8c8c8";
  std::size_t shade = 0;
  for (const char c : node.function) shade = (shade * 31 + static_cast<unsigned char>(c)) % 5;
  static constexpr const char* kUser[] = {"#7fb3e6", "#8cbde9", "#6fa8df", "#9cc6ee", "#79afe3"};
  static constexpr const char* kLibrary[] = {"#f2b36b", "#f5c07f", "#efa85c", "#f7c98f", "#f0ae63"};
  return node.user ? kUser[shade] : kLibrary[shade];
}

// The label that fits in `width` pixels, cut with an ellipsis; "" when not even three characters fit.
std::string flameLabel(const std::string& function, double width) {
  const auto fits = static_cast<std::size_t>(std::max(0.0, (width - 6) / kFlameCharWidth));
  if (fits < 3) return "";
  if (function.size() <= fits) return function;
  return function.substr(0, fits - 1) + "\u2026";
}

struct FlameDraw {
  double root_s = 0;
  int boxes = 0;
  int depth = 0;
  std::string svg;
};

void drawFlameNode(const FlameNode& node, int parent_box, int depth, double x, FlameDraw& draw) {
  const double width = draw.root_s > 0 ? node.total_s / draw.root_s * kFlameWidth : 0;
  const int box = draw.boxes++;
  draw.depth = std::max(draw.depth, depth);
  const std::string where = flameWhere(node);
  const std::string tooltip = fmt::format(
      "{}{}\n{} total ({} of the sampled time), {} self, {} sample(s){}", sanitizeUtf8(node.function),
      where.empty() ? "" : " \u2014 " + sanitizeUtf8(where), formatSeconds(node.total_s),
      formatPercent(draw.root_s > 0 ? node.total_s / draw.root_s : 0), formatSeconds(node.self_s), node.samples,
      depth == 0  ? ""
      : node.user ? "\nyour code"
                  : "\ntorch or a library");
  const std::string label = flameLabel(sanitizeUtf8(node.function), width);
  draw.svg += fmt::format(
      "<g class=\"flame-box\" data-box=\"{}\" data-parent=\"{}\"><title>{}</title>"
      "<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"0.5\"/>",
      box, parent_box, escapeXml(tooltip), x, depth * kFlameRow, width, kFlameRow - 1, flameFill(node, depth));
  if (!label.empty()) {
    draw.svg += fmt::format("<text x=\"{:.2f}\" y=\"{}\" font-size=\"11\">{}</text>", x + 3, depth * kFlameRow + 13,
                            escapeXml(label));
  }
  draw.svg += "</g>\n";
  // Children from the left edge in order; what they leave of the parent's width is its self and pruned time.
  double child_x = x;
  for (const auto& child : node.children) {
    drawFlameNode(child, box, depth + 1, child_x, draw);
    child_x += draw.root_s > 0 ? child.total_s / draw.root_s * kFlameWidth : 0;
  }
}

}  // namespace

std::string flameChart(const FlameGraph& graph) {
  if (!graph.recorded) return "";
  if (graph.root.total_s <= 0) return "<h3>Flame graph</h3>\n<p>No sampled time in the steps analysed.</p>\n";
  FlameDraw draw;
  draw.root_s = graph.root.total_s;
  drawFlameNode(graph.root, -1, 0, 0, draw);
  const std::string over = sampledSpan(graph.steps, graph.unsampled_steady_steps);
  std::string out = fmt::format(
      "<h3>Flame graph</h3>\n<p class=\"legend\">{} sample(s) of {} thread(s) over {}, {} of wall time summed over "
      "the threads. Callers above their callees, each box as wide as its time; "
      "<span style=\"background:#7fb3e6\">&nbsp;blue&nbsp;</span> your code, "
      "<span style=\"background:#f2b36b\">&nbsp;orange&nbsp;</span> torch and the libraries; "
      "hover a box for its line and times. Boxes under {} of the total are left out",
      graph.root.samples, graph.threads, over, formatSeconds(graph.root.total_s), formatPercent(graph.min_share));
  out += graph.pruned_nodes > 0
             ? fmt::format(" ({} of them, {}).</p>\n", graph.pruned_nodes, formatSeconds(graph.pruned_s))
             : std::string(" (none here).</p>\n");
  out += fmt::format(
      "<svg class=\"flame\" width=\"{0:.0f}\" height=\"{1}\" viewBox=\"0 0 {0:.0f} {1}\" role=\"img\" "
      "aria-label=\"flame graph of the sampled stacks\" font-family=\"system-ui,sans-serif\">\n",
      kFlameWidth, (draw.depth + 1) * kFlameRow);
  return out + draw.svg + "</svg>\n";
}

}  // namespace torchscope::analyzer::report
