// The flame graph of the stack sampler's samples: the merged tree of a store written through store::Writer against
// its golden (steady-state steps only, and the whole run), and the HTML report's drawing of it.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>

#include "SampledStore.h"
#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/FlameGraph.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/store/Reader.h"

namespace torchscope::analyzer {
namespace {

using testing::TempDir;

nlohmann::json nodeJson(const FlameNode& node) {
  nlohmann::json children = nlohmann::json::array();
  for (const auto& child : node.children) children.push_back(nodeJson(child));
  return {{"function", node.function},
          {"where", flameWhere(node)},
          {"user", node.user},
          {"samples", node.samples},
          {"self_samples", node.self_samples},
          {"total_ms", std::round(node.total_s * 1e6) / 1e3},
          {"self_ms", std::round(node.self_s * 1e6) / 1e3},
          {"children", children}};
}

nlohmann::json graphJson(const FlameGraph& graph) {
  return {{"recorded", graph.recorded},         {"steps", graph.steps},
          {"threads", graph.threads},           {"min_share", graph.min_share},
          {"pruned_nodes", graph.pruned_nodes}, {"pruned_ms", std::round(graph.pruned_s * 1e6) / 1e3},
          {"root", nodeJson(graph.root)}};
}

FlameGraph graphOf(const std::string& path, const FlameOptions& options) {
  auto reader = store::Reader::open(path);
  EXPECT_TRUE(reader.ok());
  auto graph = flameGraph(**reader, options);
  EXPECT_TRUE(graph.ok()) << graph.error().message;
  return graph.ok() ? *graph : FlameGraph{};
}

TEST(FlameGraph, SteadyStateTreeMatchesGolden) {
  TempDir dir;
  const FlameGraph graph = graphOf(testing::writeSampledStore(dir.file("sampled.db")), {});
  testing::expectMatchesGolden(graphJson(graph), testing::goldenDir() / "flame" / "steady.json");
  EXPECT_EQ(graph.pruned_nodes, 1);
  EXPECT_NEAR(graph.root.total_s, 0.405, 1e-9);
  // Every kept node's total is its self plus its children's plus what was pruned under it (Adam's inner loop).
  double pruned_s = 0;
  for (std::vector<const FlameNode*> nodes{&graph.root}; !nodes.empty();) {
    const FlameNode* node = nodes.back();
    nodes.pop_back();
    double children_s = 0;
    for (const auto& child : node->children) {
      children_s += child.total_s;
      nodes.push_back(&child);
    }
    EXPECT_GE(node->total_s + 1e-12, node->self_s + children_s) << node->function;
    pruned_s += node->total_s - node->self_s - children_s;
  }
  EXPECT_NEAR(pruned_s, graph.pruned_s, 1e-9);
}

TEST(FlameGraph, WholeRunKeepsTheWarmUpAndEveryNodeWithoutPruning) {
  TempDir dir;
  FlameOptions options;
  options.steady_only = false;
  options.min_share = 0;
  const FlameGraph graph = graphOf(testing::writeSampledStore(dir.file("sampled.db")), options);
  testing::expectMatchesGolden(graphJson(graph), testing::goldenDir() / "flame" / "whole_run.json");
  EXPECT_EQ(graph.steps, 0);
  EXPECT_EQ(graph.pruned_nodes, 0);
}

TEST(FlameGraph, AStoreWithoutSamplesHasNoGraph) {
  TempDir dir;
  const FlameGraph graph = graphOf(testing::fixtureStore(dir, "cpu_overview"), {});
  EXPECT_FALSE(graph.recorded);
  EXPECT_TRUE(graph.root.children.empty());
}

struct DrawnBox {
  int parent = -1;
  double x = 0, width = 0, y = 0;
};

// The boxes of the report's flame graph, by their number.
std::map<int, DrawnBox> drawnBoxes(const std::string& html) {
  static const std::regex box(
      R"re(<g class="flame-box" data-box="(\d+)" data-parent="(-?\d+)"><title>[^<]*</title><rect x="([\d.]+)" y="(\d+)" width="([\d.]+)")re");
  std::map<int, DrawnBox> boxes;
  for (std::sregex_iterator it(html.begin(), html.end(), box), end; it != end; ++it) {
    boxes[std::stoi((*it)[1])] = {std::stoi((*it)[2]), std::stod((*it)[3]), std::stod((*it)[5]), std::stod((*it)[4])};
  }
  return boxes;
}

TEST(FlameGraphHtml, SelfContainedEscapedAndEveryBoxWithinItsParent) {
  TempDir dir;
  auto analysis = analyze({testing::writeSampledStore(dir.file("sampled.db"))});
  ASSERT_TRUE(analysis.ok()) << analysis.error().message;
  const std::string html = render(*analysis, Format::kHtml);
  ASSERT_NE(html.find("<h3>Flame graph</h3>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<lambda>"), std::string::npos);
  EXPECT_NE(html.find("&lt;lambda&gt;"), std::string::npos);
  EXPECT_NE(html.find("Boxes under 0.5 % of the total are left out (1 of them, 1.0 ms)"), std::string::npos);
  // The tooltip names the function, its line (relative to the job's folder) and its times.
  EXPECT_NE(html.find("<title>forward \u2014 model.py:12\n200.0 ms total (49.4 % of the sampled time), 40.0 ms self"),
            std::string::npos)
      << html;

  const auto boxes = drawnBoxes(html);
  ASSERT_EQ(boxes.size(), 9u);  // the root and the 8 kept frames
  ASSERT_EQ(boxes.at(0).parent, -1);
  EXPECT_NEAR(boxes.at(0).width, 800, 0.01);
  std::map<int, double> children_width;
  for (const auto& [id, box] : boxes) {
    if (box.parent < 0) continue;
    const DrawnBox& parent = boxes.at(box.parent);
    EXPECT_EQ(box.y, parent.y + 18) << id;
    EXPECT_GE(box.x, parent.x - 0.01) << id;
    EXPECT_LE(box.x + box.width, parent.x + parent.width + 0.02) << id;
    children_width[box.parent] += box.width;
  }
  for (const auto& [id, width] : children_width) EXPECT_LE(width, boxes.at(id).width + 0.02) << id;
  // The root and <module> have no self time and nothing pruned under them: their children fill them exactly.
  EXPECT_NEAR(children_width[0], boxes.at(0).width, 0.02);
  EXPECT_NEAR(children_width[1], boxes.at(1).width, 0.02);
}

TEST(FlameGraphHtml, AReportWithoutSamplesHasNoFlameGraph) {
  TempDir dir;
  auto analysis = analyze({testing::fixtureStore(dir, "cpu_overview")});
  ASSERT_TRUE(analysis.ok());
  EXPECT_EQ(render(*analysis, Format::kHtml).find("Flame graph"), std::string::npos);
}

}  // namespace
}  // namespace torchscope::analyzer
