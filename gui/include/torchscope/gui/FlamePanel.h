// The "Flame graph" tab's model: the analyzer's tree of sampled stacks (FlameGraph.h) laid out as boxes, one row
// per depth, each as wide as its share of the root's time, with the text of its tooltip. Qt-free.
//
// Error contract: nothing fails; a store the tree cannot be read from gives no boxes and `error`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torchscope/analyzer/FlameGraph.h"

namespace torchscope::gui {

struct FlameBox {
  const analyzer::FlameNode* node = nullptr;
  int depth = 0;     // 0: the root, at the top
  double begin = 0;  // left and right edges as shares of the root's width, in [0, 1]
  double end = 0;
  int parent = -1;  // index of the parent's box
};

class FlamePanel {
 public:
  FlamePanel() = default;
  FlamePanel(const FlamePanel&) = delete;  // the boxes point into the graph
  FlamePanel& operator=(const FlamePanel&) = delete;

  // The tree of the store at `path` (analyzer::flameGraph: steady-state steps, pruned under 0.5 %).
  void load(const std::string& path);
  void setGraph(analyzer::FlameGraph graph);

  [[nodiscard]] const analyzer::FlameGraph& graph() const { return graph_; }
  [[nodiscard]] const std::vector<FlameBox>& boxes() const { return boxes_; }
  [[nodiscard]] int depth() const { return depth_; }  // rows: the deepest box's depth + 1, 0 without boxes
  // The box drawn at `share` of the width in row `depth`, -1 for none.
  [[nodiscard]] int boxAt(double share, int depth) const;
  // Function, file:line, total and self time, share of the sampled time, and whose code it is.
  [[nodiscard]] std::string tooltip(int box) const;
  // One line over the graph: what was sampled, over which steps, and what was pruned; why there is no graph.
  [[nodiscard]] std::string summary() const;
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  void layOut(const analyzer::FlameNode& node, int parent, int depth, double begin);

  analyzer::FlameGraph graph_;
  std::vector<FlameBox> boxes_;
  int depth_ = 0;
  std::string error_;
};

}  // namespace torchscope::gui
