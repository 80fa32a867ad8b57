#include "FlameGraphs.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "LineTimes.h"

namespace torchscope::analyzer {

namespace {

using FrameKey = std::tuple<std::string, std::int64_t, std::string>;  // file, line, function

// The merged tree while it is built: nodes in creation order, so that a parent always comes before its children.
struct FlameBuild {
  struct Node {
    int parent = -1;
    int frame = -1;               // index into frames, -1 for the root
    std::map<int, int> children;  // frame -> node
    std::int64_t self_samples = 0, self_ns = 0, samples = 0, total_ns = 0;
  };
  std::vector<FrameKey> frames;
  std::vector<bool> user;
  std::vector<Node> nodes{Node{}};

  int child(int parent, int frame) {
    const auto [it, added] =
        nodes[static_cast<std::size_t>(parent)].children.try_emplace(frame, static_cast<int>(nodes.size()));
    const int index = it->second;  // read before the push below moves the parent
    if (added) {
      Node node;
      node.parent = parent;
      node.frame = frame;
      nodes.push_back(std::move(node));
    }
    return index;
  }
};

// The stored stacks' trie mapped onto the merged tree: stacks with the same frames, outermost first, share a node
// whatever their ids (threads and frame ids that repeat a file, line and function merge).
class StackPlacer {
 public:
  StackPlacer(FlameBuild& build, std::unordered_map<std::int64_t, std::pair<std::int64_t, int>> stacks)
      : build_(build), stacks_(std::move(stacks)) {}

  // The node of `stack_id`; the root for an unknown stack.
  int nodeOf(std::int64_t stack_id) {
    std::vector<std::int64_t> chain;  // innermost first, up to a placed stack or the outermost frame
    int base = 0;
    std::int64_t id = stack_id;
    // A damaged store may hold a cycle: the walk stops after as many stacks as there are.
    for (std::size_t hops = 0; id >= 0 && hops <= stacks_.size(); ++hops) {
      if (auto placed = placed_.find(id); placed != placed_.end()) {
        base = placed->second;
        break;
      }
      const auto stack = stacks_.find(id);
      if (stack == stacks_.end()) break;
      chain.push_back(id);
      id = stack->second.first;
    }
    int node = base;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const int frame = stacks_.at(*it).second;
      if (frame >= 0) node = build_.child(node, frame);
      placed_[*it] = node;
    }
    return node;
  }

 private:
  FlameBuild& build_;
  std::unordered_map<std::int64_t, std::pair<std::int64_t, int>> stacks_;  // id -> (parent id, frame index)
  std::unordered_map<std::int64_t, int> placed_;
};

struct Pruning {
  std::int64_t min_ns = 0;
  std::int64_t nodes = 0;
  std::int64_t ns = 0;
};

FlameNode toNode(const FlameBuild& build, int index, Pruning& pruning) {
  const auto& source = build.nodes[static_cast<std::size_t>(index)];
  FlameNode node;
  if (source.frame >= 0) {
    const auto& [file, line, function] = build.frames[static_cast<std::size_t>(source.frame)];
    node.file = file;
    node.line = line;
    node.function = function;
    node.user = build.user[static_cast<std::size_t>(source.frame)];
  } else {
    node.function = kFlameRootName;
  }
  node.samples = source.samples;
  node.self_samples = source.self_samples;
  node.total_s = static_cast<double>(source.total_ns) * 1e-9;
  node.self_s = static_cast<double>(source.self_ns) * 1e-9;
  for (const auto& [frame, child] : source.children) {
    const auto& kept = build.nodes[static_cast<std::size_t>(child)];
    if (kept.total_ns <= 0 || kept.total_ns < pruning.min_ns) {
      pruning.nodes += 1;
      pruning.ns += kept.total_ns;
      continue;
    }
    node.children.push_back(toNode(build, child, pruning));
  }
  std::sort(node.children.begin(), node.children.end(), [](const FlameNode& a, const FlameNode& b) {
    return std::tie(b.total_s, a.function, a.file, a.line) < std::tie(a.total_s, b.function, b.file, b.line);
  });
  return node;
}

}  // namespace

Result<FlameGraph> buildFlameGraph(const store::Reader& reader, const Facts& facts, const store::CodeRoots& code,
                                   const FlameOptions& options) {
  FlameGraph graph;
  graph.min_share = std::max(options.min_share, 0.0);
  if (facts.count("stack_samples") == 0) return graph;
  auto frames = reader.load<store::StackFrame>();
  if (!frames) return frames.error();
  auto stacks = reader.load<store::Stack>();
  if (!stacks) return stacks.error();

  FlameBuild build;
  std::map<FrameKey, int> frame_index;
  std::unordered_map<std::int64_t, int> frame_of_id;
  for (const auto& frame : *frames) {
    FrameKey key{frame.file, frame.line, frame.function};
    auto [it, added] = frame_index.try_emplace(key, static_cast<int>(build.frames.size()));
    if (added) {
      build.frames.push_back(key);
      build.user.push_back(code.isUserFile(frame.file));
    }
    frame_of_id[frame.id] = it->second;
  }
  std::unordered_map<std::int64_t, std::pair<std::int64_t, int>> trie;
  for (const auto& stack : *stacks) {
    const auto frame = frame_of_id.find(stack.frame_id);
    trie[stack.id] = {stack.parent_id, frame == frame_of_id.end() ? -1 : frame->second};
  }
  StackPlacer placer(build, std::move(trie));

  // The steady-state steps of the facts, as the line table takes them: every sample when none falls in one.
  const std::set<std::int64_t> steady = facts.steadyStepIndices();
  struct Row {
    std::int64_t step, tid, stack, samples, wall_ns;
  };
  std::vector<Row> rows;
  bool any_steady = false;
  const SampleFilter filter(facts);  // idle threads are left out, as in the line table
  auto done = reader.query(
      "SELECT step, tid, stack_id, sum(samples), sum(wall_ns), min(cpu_ns), sum(max(cpu_ns, 0)) FROM stack_samples "
      "GROUP BY step, tid, stack_id",
      [&](const store::Row& row) {
        graph.recorded = true;
        // min(cpu_ns) < 0: some row of the group had no CPU time.
        if (filter.idle(row.integer(1), row.integer(4), row.integer(5) < 0 ? -1 : row.integer(6))) return;
        rows.push_back({row.integer(0), row.integer(1), row.integer(2), row.integer(3), row.integer(4)});
        any_steady = any_steady || steady.count(row.integer(0)) > 0;
      });
  if (!done) return done.error();
  const bool steady_only = options.steady_only && any_steady;
  graph.steps = steady_only ? static_cast<std::int64_t>(steady.size()) : 0;
  graph.unsampled_steady_steps = options.steady_only && !any_steady ? static_cast<std::int64_t>(steady.size()) : 0;
  std::set<std::int64_t> threads;
  for (const auto& row : rows) {
    if (steady_only && !steady.count(row.step)) continue;
    threads.insert(row.tid);
    auto& node = build.nodes[static_cast<std::size_t>(placer.nodeOf(row.stack))];
    node.self_samples += row.samples;
    node.self_ns += std::max<std::int64_t>(row.wall_ns, 0);
  }
  graph.threads = static_cast<std::int64_t>(threads.size());
  // Totals bottom-up: children were created after their parents.
  for (auto& node : build.nodes) {
    node.samples += node.self_samples;
    node.total_ns += node.self_ns;
  }
  for (std::size_t i = build.nodes.size(); i-- > 1;) {
    auto& parent = build.nodes[static_cast<std::size_t>(build.nodes[i].parent)];
    parent.samples += build.nodes[i].samples;
    parent.total_ns += build.nodes[i].total_ns;
  }
  Pruning pruning;
  pruning.min_ns = static_cast<std::int64_t>(graph.min_share * static_cast<double>(build.nodes.front().total_ns));
  graph.root = toNode(build, 0, pruning);
  graph.pruned_nodes = pruning.nodes;
  graph.pruned_s = static_cast<double>(pruning.ns) * 1e-9;
  return graph;
}

Result<FlameGraph> flameGraph(const store::Reader& reader, const FlameOptions& options) {
  auto facts = collectFacts(reader);
  if (!facts) return facts.error();
  auto attributes = reader.load<store::RunAttribute>();
  if (!attributes) return attributes.error();
  store::CodeRoots code = store::codeRootsFrom(*attributes);
  code.user.insert(code.user.end(), options.user_code.begin(), options.user_code.end());
  return buildFlameGraph(reader, *facts, code, options);
}

std::string flameWhere(const FlameNode& node) {
  if (node.file.empty()) return "";
  return node.line >= 0 ? node.file + ":" + std::to_string(node.line) : node.file;
}

}  // namespace torchscope::analyzer
