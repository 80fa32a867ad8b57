// The flame graph of the collector's stack sampler (docs/FORMAT.md, *Sampled stacks*): every sampled stack of
// every thread merged into one tree, callers above their callees, each node with the wall time of the samples
// that passed through it (total) and of those that ended in it (self). Drawn by the HTML report and the GUI.
//
// Error contract: flameGraph() fails with the store's error for a store it cannot read; nothing throws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torchscope/base/Result.h"
#include "torchscope/store/Reader.h"

namespace torchscope::analyzer {

struct FlameNode {
  std::string function;  // the root: "all threads"
  std::string file;      // "" for the root
  std::int64_t line = -1;
  bool user = false;              // the user's code (store/UserCode.h, the rule of the line table)
  std::int64_t samples = 0;       // total: the samples with this frame on the stack at this place
  std::int64_t self_samples = 0;  // the samples whose innermost frame it is
  double total_s = 0;             // their wall time, summed over threads
  double self_s = 0;
  std::vector<FlameNode> children;  // most total time first; pruned ones left out (their time stays in total_s)
};

struct FlameGraph {
  bool recorded = false;          // the store has samples
  std::int64_t steps = 0;         // the steady-state steps the samples come from; 0: the whole run
  std::int64_t threads = 0;       // the threads sampled
  double min_share = 0;           // nodes under this share of the root's time were pruned
  std::int64_t pruned_nodes = 0;  // how many (with their subtrees)
  double pruned_s = 0;            // and their time
  // When the graph takes the whole run because none of the run's steady-state steps holds a sample: how many it has.
  std::int64_t unsampled_steady_steps = 0;
  FlameNode root;
};

// The root's own name (it stands for every sampled thread).
inline constexpr const char* kFlameRootName = "all threads";
// The share under which nodes are pruned by default, so that a large job stays drawable.
inline constexpr double kFlameMinShare = 0.005;

struct FlameOptions {
  bool steady_only = true;             // the steady-state steps' samples (all of them when the run has none)
  double min_share = kFlameMinShare;   // 0 keeps every node
  std::vector<std::string> user_code;  // more user-code roots, as `advise --user-code`
};

[[nodiscard]] Result<FlameGraph> flameGraph(const store::Reader& reader, const FlameOptions& options = {});

// "file:line" of a node ("" for the root, the file alone without a line).
[[nodiscard]] std::string flameWhere(const FlameNode& node);

}  // namespace torchscope::analyzer
