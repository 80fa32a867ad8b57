#include "LineTimes.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>

namespace torchscope::analyzer {

namespace {

using LineKey = std::tuple<std::string, std::int64_t, std::string>;  // file, line, function

struct StackNode {
  std::int64_t parent = -1;
  std::int64_t frame = 0;
};

// For every stack, its user lines: the innermost one (self) and every distinct one on it (total).
class UserLines {
 public:
  UserLines(std::unordered_map<std::int64_t, StackNode> stacks, std::vector<LineKey> lines,
            std::unordered_map<std::int64_t, int> frame_line)
      : stacks_(std::move(stacks)), lines_(std::move(lines)), frame_line_(std::move(frame_line)) {}

  // Indices into lines(), innermost first; empty for a stack with no user frame.
  const std::vector<int>& of(std::int64_t stack_id) {
    if (auto found = memo_.find(stack_id); found != memo_.end()) return found->second;
    std::vector<int> result;
    std::set<int> seen;
    // Walked iteratively: a damaged store may hold a cycle, so the walk stops after as many nodes as there are.
    std::int64_t id = stack_id;
    for (std::size_t hops = 0; id >= 0 && hops <= stacks_.size(); ++hops) {
      const auto node = stacks_.find(id);
      if (node == stacks_.end()) break;
      if (const auto line = frame_line_.find(node->second.frame); line != frame_line_.end()) {
        if (seen.insert(line->second).second) result.push_back(line->second);
      }
      id = node->second.parent;
    }
    return memo_.emplace(stack_id, std::move(result)).first->second;
  }
  [[nodiscard]] const std::vector<LineKey>& lines() const { return lines_; }

 private:
  std::unordered_map<std::int64_t, StackNode> stacks_;
  std::vector<LineKey> lines_;
  std::unordered_map<std::int64_t, int> frame_line_;  // user frames only
  std::unordered_map<std::int64_t, std::vector<int>> memo_;
};

Result<UserLines> loadUserLines(const store::Reader& reader, const store::CodeRoots& code) {
  auto frames = reader.load<store::StackFrame>();
  if (!frames) return frames.error();
  auto stacks = reader.load<store::Stack>();
  if (!stacks) return stacks.error();
  std::map<LineKey, int> line_index;
  std::vector<LineKey> lines;
  std::unordered_map<std::int64_t, int> frame_line;
  for (const auto& frame : *frames) {
    if (!code.isUserFile(frame.file)) continue;
    LineKey key{frame.file, frame.line, frame.function};
    auto [it, added] = line_index.try_emplace(key, static_cast<int>(lines.size()));
    if (added) lines.push_back(key);
    frame_line[frame.id] = it->second;
  }
  std::unordered_map<std::int64_t, StackNode> nodes;
  for (const auto& stack : *stacks) nodes[stack.id] = {stack.parent_id, stack.frame_id};
  return UserLines(std::move(nodes), std::move(lines), std::move(frame_line));
}

// The kTopLines lines with the most self time, then those of the kTopLines with the most total time that are not
// listed yet: a line that calls a function of the user's code has the function's time in its total, and none as self.
std::vector<LineTime> topLines(const std::vector<LineTime>& entries) {
  std::vector<std::size_t> order(entries.size());
  std::iota(order.begin(), order.end(), 0);
  const auto leaders = [&](double LineTime::*seconds) {
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const LineTime& x = entries[a];
      const LineTime& y = entries[b];
      return std::tie(y.*seconds, x.file, x.line) < std::tie(x.*seconds, y.file, y.line);
    });
    return std::vector<std::size_t>(order.begin(),
                                    order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), kTopLines)));
  };
  std::vector<LineTime> top;
  std::vector<bool> listed(entries.size(), false);
  for (const std::size_t i : leaders(&LineTime::self_s)) {
    if (entries[i].self_samples == 0) continue;
    listed[i] = true;
    top.push_back(entries[i]);
  }
  for (const std::size_t i : leaders(&LineTime::total_s)) {
    if (!listed[i]) top.push_back(entries[i]);
  }
  return top;
}

}  // namespace

SampleFilter::SampleFilter(const Facts& facts) {
  for (const auto& step : facts.steps) step_threads_.insert(step.tid);
}

bool SampleFilter::idle(std::int64_t tid, std::int64_t wall_ns, std::int64_t cpu_ns) const {
  if (cpu_ns < 0 || step_threads_.count(tid) != 0) return false;
  return static_cast<double>(cpu_ns) < kIdleCpuShare * static_cast<double>(wall_ns);
}

Result<LineTable> buildLineTable(const store::Reader& reader, const Facts& facts, const store::CodeRoots& code) {
  LineTable table;
  if (facts.count("stack_samples") == 0) return table;
  auto user_lines = loadUserLines(reader, code);
  if (!user_lines) return user_lines.error();
  const std::set<std::int64_t> steady = facts.steadyStepIndices();
  struct Row {
    std::int64_t step, tid, stack, samples, wall_ns, cpu_ns;
  };
  std::vector<Row> rows;
  bool any_steady = false;
  auto done = reader.query(
      "SELECT step, tid, stack_id, sum(samples), sum(wall_ns), min(cpu_ns), sum(max(cpu_ns, 0)) "
      "FROM stack_samples GROUP BY step, tid, stack_id",
      [&](const store::Row& row) {
        // min(cpu_ns) < 0: some row of the group had no CPU time.
        rows.push_back({row.integer(0), row.integer(1), row.integer(2), row.integer(3), row.integer(4),
                        row.integer(5) < 0 ? -1 : row.integer(6)});
        any_steady = any_steady || steady.count(row.integer(0)) > 0;
      });
  if (!done) return done.error();
  table.recorded = !rows.empty();
  table.steps = any_steady ? static_cast<std::int64_t>(steady.size()) : 0;
  table.unsampled_steady_steps = any_steady ? 0 : static_cast<std::int64_t>(steady.size());
  // The mean, not the median: a line's time per step is its share of the mean step, a mean too.
  table.step_s = any_steady ? facts.steady_step_total_s / static_cast<double>(steady.size()) : 0;

  struct Sums {
    std::int64_t self_samples = 0, total_samples = 0, self_ns = 0, total_ns = 0, self_cpu_ns = 0;
    bool cpu_known = true;
  };
  std::vector<Sums> sums(user_lines->lines().size());
  std::map<std::int64_t, std::int64_t> thread_ns;
  std::int64_t sampled_ns = 0, user_ns = 0, idle_ns = 0;
  const SampleFilter filter(facts);
  for (const auto& row : rows) {
    if (any_steady && !steady.count(row.step)) continue;
    if (filter.idle(row.tid, row.wall_ns, row.cpu_ns)) {
      table.idle_samples += row.samples;
      idle_ns += row.wall_ns;
      continue;
    }
    thread_ns[row.tid] += row.wall_ns;
    table.samples += row.samples;
    sampled_ns += row.wall_ns;
    const auto& lines = user_lines->of(row.stack);
    if (lines.empty()) continue;
    user_ns += row.wall_ns;
    Sums& self = sums[static_cast<std::size_t>(lines.front())];
    self.self_samples += row.samples;
    self.self_ns += row.wall_ns;
    if (row.cpu_ns < 0) self.cpu_known = false;
    self.self_cpu_ns += std::max<std::int64_t>(row.cpu_ns, 0);
    for (int index : lines) {
      sums[static_cast<std::size_t>(index)].total_samples += row.samples;
      sums[static_cast<std::size_t>(index)].total_ns += row.wall_ns;
    }
  }
  table.threads = static_cast<std::int64_t>(thread_ns.size());
  table.sampled_s = static_cast<double>(sampled_ns) * 1e-9;
  table.idle_s = static_cast<double>(idle_ns) * 1e-9;
  table.user_s = static_cast<double>(user_ns) * 1e-9;
  std::int64_t base_ns = 0;
  for (const auto& [tid, ns] : thread_ns) base_ns = std::max(base_ns, ns);
  table.base_s = static_cast<double>(base_ns) * 1e-9;

  std::vector<LineTime> entries;
  for (std::size_t i = 0; i < sums.size(); ++i) {
    if (sums[i].total_samples == 0) continue;
    const auto& [file, line, function] = user_lines->lines()[i];
    LineTime entry{file, line, function, sums[i].self_samples, sums[i].total_samples};
    entry.self_s = static_cast<double>(sums[i].self_ns) * 1e-9;
    entry.total_s = static_cast<double>(sums[i].total_ns) * 1e-9;
    entry.self_cpu_s = sums[i].cpu_known ? static_cast<double>(sums[i].self_cpu_ns) * 1e-9 : -1;
    entry.share = table.base_s > 0 ? entry.self_s / table.base_s : 0;
    entry.total_share = table.base_s > 0 ? entry.total_s / table.base_s : 0;
    entry.self_per_step_s = table.steps > 0 ? entry.share * table.step_s : entry.self_s;
    entry.total_per_step_s = table.steps > 0 ? entry.total_share * table.step_s : entry.total_s;
    entries.push_back(std::move(entry));
  }
  table.lines = topLines(entries);
  return table;
}

std::string sampledSpan(std::int64_t steps, std::int64_t unsampled_steady_steps) {
  if (steps > 0) return "the " + std::to_string(steps) + " steady-state step(s)";
  if (unsampled_steady_steps > 0) {
    return "the whole run (no sample landed in its " + std::to_string(unsampled_steady_steps) +
           " steady-state step(s))";
  }
  return "the whole run (no steady-state steps)";
}

Result<LineTable> lineTable(const store::Reader& reader, const std::vector<std::string>& user_code) {
  auto facts = collectFacts(reader);
  if (!facts) return facts.error();
  auto attributes = reader.load<store::RunAttribute>();
  if (!attributes) return attributes.error();
  store::CodeRoots code = store::codeRootsFrom(*attributes);
  code.user.insert(code.user.end(), user_code.begin(), user_code.end());
  return buildLineTable(reader, *facts, code);
}

}  // namespace torchscope::analyzer
