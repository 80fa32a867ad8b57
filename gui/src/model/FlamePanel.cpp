#include "torchscope/gui/FlamePanel.h"

#include <fmt/format.h>

#include <algorithm>

#include "torchscope/analyzer/Escape.h"
#include "torchscope/analyzer/LineTable.h"
#include "torchscope/base/Settings.h"
#include "torchscope/store/Reader.h"

namespace torchscope::gui {

namespace {

std::string flameSeconds(double seconds) {
  if (seconds >= 1) return fmt::format("{:.2f} s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.1f} ms", seconds * 1e3);
  return fmt::format("{:.0f} us", seconds * 1e6);
}

}  // namespace

void FlamePanel::load(const std::string& path) {
  error_.clear();
  auto reader = store::Reader::open(path);
  if (!reader) {
    error_ = reader.error().message;
    setGraph({});
    return;
  }
  auto graph = analyzer::flameGraph(**reader);
  if (!graph) {
    error_ = graph.error().message;
    setGraph({});
    return;
  }
  setGraph(std::move(*graph));
}

void FlamePanel::setGraph(analyzer::FlameGraph graph) {
  graph_ = std::move(graph);
  boxes_.clear();
  depth_ = 0;
  if (graph_.recorded && graph_.root.total_s > 0) layOut(graph_.root, -1, 0, 0);
}

// Depth first, so that a box's children follow it; nodes point into graph_, which no longer changes.
void FlamePanel::layOut(const analyzer::FlameNode& node, int parent, int depth, double begin) {
  const double root_s = graph_.root.total_s;
  const int index = static_cast<int>(boxes_.size());
  boxes_.push_back({&node, depth, begin, std::min(1.0, begin + node.total_s / root_s), parent});
  depth_ = std::max(depth_, depth + 1);
  double child_begin = begin;
  for (const auto& child : node.children) {
    layOut(child, index, depth + 1, child_begin);
    child_begin += child.total_s / root_s;
  }
}

int FlamePanel::boxAt(double share, int depth) const {
  for (std::size_t i = 0; i < boxes_.size(); ++i) {
    const FlameBox& box = boxes_[i];
    if (box.depth == depth && share >= box.begin && share < box.end) return static_cast<int>(i);
  }
  return -1;
}

std::string FlamePanel::tooltip(int box) const {
  if (box < 0 || static_cast<std::size_t>(box) >= boxes_.size()) return "";
  const analyzer::FlameNode& node = *boxes_[static_cast<std::size_t>(box)].node;
  const std::string where = analyzer::flameWhere(node);
  const double share = graph_.root.total_s > 0 ? node.total_s / graph_.root.total_s : 0;
  return analyzer::sanitizeUtf8(fmt::format("{}{}\n{} total ({:.1f} % of the sampled time), {} self, {} sample(s){}",
                                            node.function, where.empty() ? "" : "\n" + where,
                                            flameSeconds(node.total_s), share * 100, flameSeconds(node.self_s),
                                            node.samples,
                                            box == 0    ? ""
                                            : node.user ? "\nyour code: click to show the line"
                                                        : "\ntorch or a library"));
}

std::string FlamePanel::summary() const {
  if (!error_.empty()) return "No flame graph: " + error_;
  if (!graph_.recorded) {
    return "No flame graph: the store has no stack samples (the job ran with the sampler off, " +
           std::string(base::settings::kSampleHz.name) + "=0 or --sample-hz 0, or ran no Python).";
  }
  if (boxes_.empty()) return "No flame graph: no sampled time in the steps analysed.";
  const std::string over = analyzer::sampledSpan(graph_.steps, graph_.unsampled_steady_steps);
  return fmt::format(
      "{} sample(s) of {} thread(s) over {}, {} of wall time summed over the threads. Blue: your "
      "code, orange: torch and the libraries; boxes under {:.1f} % of the total left out ({}).",
      graph_.root.samples, graph_.threads, over, flameSeconds(graph_.root.total_s), graph_.min_share * 100,
      graph_.pruned_nodes);
}

}  // namespace torchscope::gui
