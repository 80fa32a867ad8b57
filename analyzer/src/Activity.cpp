#include "Activity.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "Rules.h"

namespace torchscope::analyzer {

namespace {

constexpr std::size_t kClassifiedGaps = 20000;      // the largest gaps are classified; the split is extrapolated
constexpr double kMaxDisorder = 0.01;               // share of out-of-order kernels the storage-order pass tolerates
constexpr std::int64_t kLaunchSampleChunks = 16;    // the launch cost is the mean over evenly spread samples
constexpr std::int64_t kLaunchSampleRows = 8192;

// Busy union and gaps per device over kernels fed in (nearly) start order.
class WindowScan {
 public:
  WindowScan(store::Nanos begin, store::Nanos end, store::Nanos short_ns) : begin_(begin), end_(end), short_ns_(short_ns) {}

  bool contains(store::Nanos start) const { return start >= begin_ && start < end_; }

  void add(std::int64_t device, store::Nanos start, store::Nanos end, std::int64_t pid, std::int64_t correlation) {
    ++result_.kernels;
    if (end - start < short_ns_) {
      ++result_.short_kernels;
      result_.short_kernel_s += toSeconds(static_cast<double>(end - start));
    }
    Device& state = devices_[device];
    if (start < state.last_start) ++disorder_;
    state.last_start = start;
    if (state.busy_until < 0) {
      addGap(start - begin_, pid, correlation, begin_);
      state.busy_until = start;
    }
    if (start > state.busy_until) addGap(start - state.busy_until, pid, correlation, state.busy_until);
    state.busy_until = std::max(state.busy_until, std::min(end, end_));
  }

  // Out-of-order rows can hide gaps; above this share the caller rescans in start order.
  bool tooDisordered() const {
    return result_.kernels > 0 && static_cast<double>(disorder_) > kMaxDisorder * static_cast<double>(result_.kernels);
  }

  KernelWindow finish() {
    for (const auto& [device, state] : devices_) {
      if (state.busy_until >= 0 && state.busy_until < end_) result_.idle_s += toSeconds(static_cast<double>(end_ - state.busy_until));
    }
    for (; !largest_.empty(); largest_.pop()) result_.largest_gaps.push_back(largest_.top());
    return std::move(result_);
  }

 private:
  struct Device {
    store::Nanos busy_until = -1;
    store::Nanos last_start = -1;
  };

  void addGap(store::Nanos length, std::int64_t pid, std::int64_t correlation, store::Nanos previous_end) {
    if (length <= 0) return;
    const double seconds = toSeconds(static_cast<double>(length));
    result_.idle_s += seconds;
    if (largest_.size() == kClassifiedGaps && seconds <= largest_.top().seconds) return;
    largest_.push({seconds, pid, correlation, previous_end});
    if (largest_.size() > kClassifiedGaps) largest_.pop();
  }

  store::Nanos begin_;
  store::Nanos end_;
  store::Nanos short_ns_;
  std::map<std::int64_t, Device> devices_;
  std::int64_t disorder_ = 0;
  KernelWindow result_;
  std::priority_queue<Gap, std::vector<Gap>, std::greater<>> largest_;
};

struct NameTotals {
  std::int64_t count = 0;
  std::int64_t nanos = 0;
  std::int64_t small = 0;  // CPU ops shorter than Facts::kSmallOpNanos
};

struct PairHash {
  std::size_t operator()(const std::pair<std::int64_t, std::int64_t>& key) const {
    return std::hash<std::int64_t>{}(key.first * 1'000'003 + key.second);
  }
};
using NameMap = std::unordered_map<std::pair<std::int64_t, std::int64_t>, NameTotals, PairHash>;

// Resolves interned ids to names in one query.
Result<std::vector<NameStat>> resolve(const store::Reader& reader, const NameMap& totals, std::vector<std::int64_t>* small) {
  std::unordered_map<std::int64_t, std::string> names;
  std::string ids;
  for (const auto& [key, value] : totals) ids += (ids.empty() ? "" : ",") + std::to_string(key.first);
  if (!ids.empty()) {
    auto done = reader.query(fmt::format("SELECT id, value FROM strings WHERE id IN ({})", ids),
                             [&](const store::Row& row) { names[row.integer(0)] = row.text(1); });
    if (!done) return done.error();
  }
  std::vector<NameStat> stats;
  for (const auto& [key, value] : totals) {
    stats.push_back({names[key.first], key.second, value.count, toSeconds(static_cast<double>(value.nanos))});
    if (small) small->push_back(value.small);
  }
  // Largest first; ties by name so that output is deterministic.
  std::vector<std::size_t> order(stats.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(stats[b].seconds, stats[a].name, stats[a].device) < std::tie(stats[a].seconds, stats[b].name, stats[b].device);
  });
  std::vector<NameStat> sorted;
  std::vector<std::int64_t> small_sorted;
  for (std::size_t index : order) {
    sorted.push_back(stats[index]);
    if (small) small_sorted.push_back((*small)[index]);
  }
  if (small) *small = std::move(small_sorted);
  return sorted;
}

Result<LaunchCost> launchCost(const store::Reader& reader) {
  std::int64_t max_id = 0;
  auto counted = reader.query("SELECT coalesce(max(id), 0) FROM api_calls", [&](const store::Row& row) { max_id = row.integer(0); });
  if (!counted) return counted.error();
  LaunchCost cost;
  double total_s = 0;
  const std::int64_t stride = std::max<std::int64_t>(kLaunchSampleRows, max_id / kLaunchSampleChunks);
  for (std::int64_t begin = 0; begin <= max_id; begin += stride) {
    auto done = reader.query(
        "SELECT count(*), coalesce(sum(end_ns - start_ns), 0) FROM api_calls WHERE id >= ? AND id < ? AND name_id IN "
        "(SELECT id FROM strings WHERE value LIKE 'cudaLaunchKernel%' OR value LIKE 'cuLaunchKernel%' "
        "OR value LIKE 'cudaLaunchCooperativeKernel%')",
        [&](const store::Row& row) {
          cost.launches += row.integer(0);
          total_s += toSeconds(row.real(1));
        },
        {begin, begin + kLaunchSampleRows});
    if (!done) return done.error();
  }
  cost.mean_s = cost.launches > 0 ? total_s / static_cast<double>(cost.launches) : 0;
  return cost;
}

}  // namespace

Result<void> scanActivity(const store::Reader& reader, Facts& facts) {
  auto launch = launchCost(reader);
  if (!launch) return launch.error();
  facts.launch = *launch;

  NameMap kernel_totals;
  const auto short_ns = static_cast<store::Nanos>(facts.launch.mean_s * 1e9);
  WindowScan window(facts.steady_begin_ns, facts.steady_end_ns, short_ns);
  auto kernels = reader.query("SELECT device, start_ns, end_ns, pid, correlation_id, name_id FROM kernels",
                              [&](const store::Row& row) {
                                const store::Nanos start = row.integer(1);
                                const store::Nanos end = row.integer(2);
                                NameTotals& totals = kernel_totals[{row.integer(5), row.integer(0)}];
                                ++totals.count;
                                totals.nanos += end - start;
                                if (window.contains(start)) window.add(row.integer(0), start, end, row.integer(3), row.integer(4));
                              });
  if (!kernels) return kernels.error();
  if (window.tooDisordered()) {
    WindowScan ordered(facts.steady_begin_ns, facts.steady_end_ns, short_ns);
    auto rescanned = reader.query(
        "SELECT device, start_ns, end_ns, pid, correlation_id FROM kernels WHERE start_ns >= ? AND start_ns < ? "
        "ORDER BY start_ns",
        [&](const store::Row& row) { ordered.add(row.integer(0), row.integer(1), row.integer(2), row.integer(3), row.integer(4)); },
        {facts.steady_begin_ns, facts.steady_end_ns});
    if (!rescanned) return rescanned.error();
    facts.kernel_window = ordered.finish();
  } else {
    facts.kernel_window = window.finish();
  }
  auto kernel_names = resolve(reader, kernel_totals, nullptr);
  if (!kernel_names) return kernel_names.error();
  facts.kernel_names = std::move(*kernel_names);

  NameMap op_totals;
  auto ops = reader.query("SELECT name_id, end_ns - start_ns FROM cpu_ops", [&](const store::Row& row) {
    NameTotals& totals = op_totals[{row.integer(0), -1}];
    const std::int64_t nanos = row.integer(1);
    ++totals.count;
    totals.nanos += nanos;
    totals.small += nanos < Facts::kSmallOpNanos ? 1 : 0;
  });
  if (!ops) return ops.error();
  std::vector<std::int64_t> small;
  auto op_names = resolve(reader, op_totals, &small);
  if (!op_names) return op_names.error();
  facts.cpu_op_names = std::move(*op_names);
  for (std::size_t i = 0; i < facts.cpu_op_names.size(); ++i) {
    if (facts.cpu_op_names[i].name.rfind("aten::", 0) != 0) continue;
    facts.aten_ops += facts.cpu_op_names[i].count;
    facts.small_aten_ops += small[i];
  }
  return {};
}

}  // namespace torchscope::analyzer
