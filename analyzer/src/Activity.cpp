#include "Activity.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "Rules.h"
#include "torchscope/base/Saturating.h"

namespace torchscope::analyzer {

namespace {

constexpr std::size_t kClassifiedGaps = 20000;      // the largest gaps are classified; the split is extrapolated
constexpr std::size_t kReorderRows = 65536;         // per device: kernels held back to be released in start order
constexpr std::size_t kShiftsPerRow = 16;           // mean rows moved per kernel placed, beyond which kernels are set aside
constexpr std::int64_t kLaunchSampleChunks = 16;    // the launch cost is the mean over evenly spread samples
constexpr std::int64_t kLaunchSampleRows = 8192;

// A kernel, copy or memset on one device.
struct Interval {
  std::int64_t device = -1;
  base::Nanos start = 0;
  base::Nanos end = 0;
  std::int64_t pid = 0;
  std::int64_t correlation = -1;
};

// Rows of a table (device, start_ns, end_ns, pid, correlation_id) that may overlap [begin, end). The unary +
// keeps SQLite from walking the start_ns index: most rows are in the window, so reading in storage order is
// much faster than one index lookup per row.
Result<void> forEachInterval(const store::Reader& reader, std::string_view table, base::Nanos begin, base::Nanos end,
                             const std::function<void(const Interval&)>& on_interval) {
  return reader.query(
      fmt::format("SELECT device, start_ns, end_ns, pid, correlation_id FROM {} WHERE +start_ns < ? AND end_ns >= ?",
                  table),
      [&](const store::Row& row) { on_interval({row.integer(0), row.integer(1), row.integer(2), row.integer(3), row.integer(4)}); },
      {end, begin});
}

// Busy union and idle gaps per device in [begin, end), over kernels, copies and memsets. Work known up front
// (copies and memsets: small tables) is sorted first. Kernels come in storage order, which is start order only
// nearly: each device's kernels pass through a reorder buffer (a deque kept in start order: an in-order kernel is
// appended, a slightly late one moved back to its place) and leave it in start order, merged with the known work. A
// kernel that starts before one the buffer already let go, or whose placing would cost more than sorting, is set
// aside instead: the caller then scans again with those kernels added to the known work, and that scan skips them (it
// sets aside the same ones: its buffer sees the same kernels in the same order).
class WindowScan {
 public:
  WindowScan(base::Nanos begin, base::Nanos end, base::Nanos short_ns)
      : begin_(begin), end_(end), short_ns_(short_ns) {}

  // Work known up front, in any order; kept once, by device and start.
  void addKnown(std::vector<Interval> work) {
    known_ = std::move(work);
    std::stable_sort(known_.begin(), known_.end(), [](const Interval& a, const Interval& b) {
      return std::tie(a.device, a.start) < std::tie(b.device, b.start);
    });
    for (std::size_t i = 0; i < known_.size();) {
      Device& state = device(known_[i].device);
      state.next_known = i;
      while (i < known_.size() && known_[i].device == known_[state.next_known].device) ++i;
      state.known_end = i;
    }
  }

  void addKernel(const Interval& kernel) {
    if (kernel.start >= begin_ && kernel.start < end_) countKernel(kernel);
    if (kernel.start >= end_ || kernel.end <= begin_) return;
    Device& state = device(kernel.device);
    auto& pending = state.pending;
    if (kernel.start < state.released_start) {
      setAside(kernel);
      return;
    }
    if (pending.empty() || pending.back().start <= kernel.start) {
      pending.push_back(kernel);
    } else {
      const auto at = std::upper_bound(pending.begin(), pending.end(), kernel.start,
                                       [](base::Nanos start, const Interval& other) { return start < other.start; });
      const auto shifts = static_cast<std::size_t>(pending.end() - at);
      if (shifts_ + shifts > kShiftsPerRow * placed_ + kReorderRows) {
        setAside(kernel);
        return;
      }
      shifts_ += shifts;
      pending.insert(at, kernel);
    }
    ++placed_;
    if (pending.size() > kReorderRows) release(state);
  }

  [[nodiscard]] bool setAnyAside() const { return !set_aside_.empty(); }

  // The next scan's known work: this one's, with the kernels set aside.
  [[nodiscard]] std::vector<Interval> takeKnownWithSetAside() {
    std::vector<Interval> merged = std::move(known_);
    merged.insert(merged.end(), set_aside_.begin(), set_aside_.end());
    return merged;
  }

  KernelWindow finish() {
    result_.begin_ns = begin_;
    result_.end_ns = end_;
    for (auto& [id, state] : devices_) {
      while (!state.pending.empty()) release(state);
      extendUntil(state, end_);
      const double window_s = toSeconds(static_cast<double>(base::spanNanos(begin_, end_)));
      state.idle_s += toSeconds(static_cast<double>(base::spanNanos(state.busy_until, end_)));
      result_.idle_s += state.idle_s;
      result_.devices.push_back({id, state.kernels, window_s - state.idle_s, state.idle_s});
    }
    for (; !largest_.empty(); largest_.pop()) result_.largest_gaps.push_back(largest_.top());
    return std::move(result_);
  }

 private:
  struct Device {
    std::deque<Interval> pending;  // in start order
    base::Nanos released_start = std::numeric_limits<base::Nanos>::min();
    base::Nanos busy_until = 0;
    std::size_t next_known = 0;  // its range of known_
    std::size_t known_end = 0;
    std::int64_t kernels = 0;
    double idle_s = 0;
  };

  // Rows come in runs of one device: the last one is kept at hand.
  Device& device(std::int64_t id) {
    if (last_device_ != nullptr && last_id_ == id) return *last_device_;
    auto [it, inserted] = devices_.try_emplace(id);
    if (inserted) it->second.busy_until = begin_;
    last_id_ = id;
    last_device_ = &it->second;
    return it->second;
  }

  void countKernel(const Interval& kernel) {
    ++result_.kernels;
    ++device(kernel.device).kernels;
    const base::Nanos length = base::spanNanos(kernel.start, kernel.end);
    if (length < short_ns_) {
      ++result_.short_kernels;
      result_.short_kernel_s += toSeconds(static_cast<double>(length));
    }
  }

  // Takes the earliest kernel out of the buffer, after the known work that starts before it.
  void release(Device& state) {
    const Interval kernel = state.pending.front();
    state.pending.pop_front();
    state.released_start = kernel.start;
    extendUntil(state, kernel.start);
    extend(state, kernel);
  }

  void extendUntil(Device& state, base::Nanos start) {
    for (; state.next_known < state.known_end && known_[state.next_known].start <= start; ++state.next_known) {
      extend(state, known_[state.next_known]);
    }
  }

  void setAside(const Interval& kernel) { set_aside_.push_back(kernel); }

  void extend(Device& state, const Interval& interval) {
    const base::Nanos start = std::max(interval.start, begin_);
    if (start > state.busy_until) {
      addGap(state, base::spanNanos(state.busy_until, start), interval, state.busy_until);
    }
    state.busy_until = std::max(state.busy_until, std::min(interval.end, end_));
  }

  void addGap(Device& state, base::Nanos length, const Interval& next, base::Nanos previous_end) {
    const double seconds = toSeconds(static_cast<double>(length));
    state.idle_s += seconds;
    if (largest_.size() == kClassifiedGaps && seconds <= largest_.top().seconds) return;
    largest_.push({seconds, next.pid, next.correlation, previous_end});
    if (largest_.size() > kClassifiedGaps) largest_.pop();
  }

  base::Nanos begin_;
  base::Nanos end_;
  base::Nanos short_ns_;
  std::map<std::int64_t, Device> devices_;
  std::int64_t last_id_ = 0;
  Device* last_device_ = nullptr;
  std::size_t placed_ = 0;  // kernels taken into a reorder buffer
  std::size_t shifts_ = 0;  // rows moved to make room for late ones
  std::vector<Interval> known_;  // copies and memsets (and kernels set aside by an earlier scan), by device and start
  std::vector<Interval> set_aside_;
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
    // Unsigned: the ids are the store's, any int64.
    return std::hash<std::uint64_t>{}(static_cast<std::uint64_t>(key.first) * 1'000'003 +
                                      static_cast<std::uint64_t>(key.second));
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

// The interned ids of the CPU ops attention/manual looks for, each with whether it is a softmax.
Result<std::unordered_map<std::int64_t, bool>> attentionNameIds(const store::Reader& reader) {
  std::unordered_map<std::int64_t, bool> ids;
  auto done = reader.query(
      "SELECT id, value FROM strings WHERE value IN ('aten::matmul', 'aten::bmm', 'aten::baddbmm', 'aten::einsum', "
      "'aten::softmax', 'aten::_softmax', 'aten::_safe_softmax')",
      [&](const store::Row& row) { ids[row.integer(0)] = row.text(1).find("softmax") != std::string::npos; });
  if (!done) return done.error();
  return ids;
}

Result<LaunchCost> launchCost(const store::Reader& reader) {
  std::int64_t max_id = 0;
  auto counted = reader.query("SELECT coalesce(max(id), 0) FROM api_calls", [&](const store::Row& row) { max_id = row.integer(0); });
  if (!counted) return counted.error();
  LaunchCost cost;
  double total_s = 0;
  const std::int64_t stride = std::max<std::int64_t>(kLaunchSampleRows, max_id / kLaunchSampleChunks);
  for (std::int64_t begin = 0; begin <= max_id; begin = base::saturatingAdd(begin, stride)) {
    // total() of clamped spans: sum() fails on an integer overflow, and a span that ends before it starts is none.
    auto done = reader.query(
        "SELECT count(*), total(max(end_ns - start_ns, 0)) FROM api_calls WHERE id >= ? AND id < ? AND name_id IN "
        "(SELECT id FROM strings WHERE value LIKE 'cudaLaunchKernel%' OR value LIKE 'cuLaunchKernel%' "
        "OR value LIKE 'cudaLaunchCooperativeKernel%')",
        [&](const store::Row& row) {
          cost.launches += row.integer(0);
          total_s += toSeconds(row.real(1));
        },
        {begin, base::saturatingAdd(begin, kLaunchSampleRows)});
    if (!done) return done.error();
    if (begin == base::kInt64Max) break;
  }
  cost.mean_s = cost.launches > 0 ? total_s / static_cast<double>(cost.launches) : 0;
  return cost;
}

// The window's busy picture: kernels fed by `feed_kernels` in storage order. When some were too far out of start
// order for the reorder buffer, a second pass over the window's kernels adds those to the known work.
Result<KernelWindow> scanWindow(const store::Reader& reader, const Facts& facts, base::Nanos short_ns,
                                const std::function<Result<void>(WindowScan&)>& feed_kernels) {
  const base::Nanos begin = facts.steady_begin_ns;
  const base::Nanos end = facts.steady_end_ns;
  std::vector<Interval> copies;
  copies.reserve(static_cast<std::size_t>(facts.count("memcpy") + facts.count("memset")));
  for (const auto table : {"memcpy", "memset"}) {
    auto read = forEachInterval(reader, table, begin, end, [&](const Interval& copy) { copies.push_back(copy); });
    if (!read) return read.error();
  }
  std::vector<Interval> known;
  {
    WindowScan window(begin, end, short_ns);
    window.addKnown(std::move(copies));
    if (auto fed = feed_kernels(window); !fed) return fed.error();
    if (!window.setAnyAside()) return window.finish();
    known = window.takeKnownWithSetAside();
  }
  WindowScan second(begin, end, short_ns);
  second.addKnown(std::move(known));
  auto fed = forEachInterval(reader, "kernels", begin, end, [&](const Interval& kernel) { second.addKernel(kernel); });
  if (!fed) return fed.error();
  return second.finish();
}

}  // namespace

Result<void> scanActivity(const store::Reader& reader, Facts& facts) {
  auto launch = launchCost(reader);
  if (!launch) return launch.error();
  facts.launch = *launch;

  auto nccl_ids = NcclOverlap::ncclNameIds(reader);
  if (!nccl_ids) return nccl_ids.error();
  NcclOverlap nccl(std::move(*nccl_ids));
  NameMap kernel_totals;
  const base::Nanos short_ns = base::saturatingCast(facts.launch.mean_s * 1e9);
  auto window = scanWindow(reader, facts, short_ns, [&](WindowScan& scan) {
    return reader.query("SELECT device, start_ns, end_ns, pid, correlation_id, name_id FROM kernels",
                        [&](const store::Row& row) {
                          const Interval kernel{row.integer(0), row.integer(1), row.integer(2), row.integer(3), row.integer(4)};
                          const std::int64_t name_id = row.integer(5);
                          NameTotals& totals = kernel_totals[{name_id, kernel.device}];
                          ++totals.count;
                          totals.nanos = base::saturatingAdd(totals.nanos, base::spanNanos(kernel.start, kernel.end));
                          scan.addKernel(kernel);
                          nccl.addKernel(name_id, kernel.start, kernel.end);
                        });
  });
  if (!window) return window.error();
  facts.kernel_window = std::move(*window);
  auto kernel_names = resolve(reader, kernel_totals, nullptr);
  if (!kernel_names) return kernel_names.error();
  facts.kernel_names = std::move(*kernel_names);

  auto attention_ids = attentionNameIds(reader);
  if (!attention_ids) return attention_ids.error();
  NameMap op_totals;
  auto ops = reader.query("SELECT name_id, start_ns, end_ns, pid, tid FROM cpu_ops", [&](const store::Row& row) {
    const std::int64_t name_id = row.integer(0);
    const base::Nanos start = row.integer(1), end = row.integer(2);
    NameTotals& totals = op_totals[{name_id, -1}];
    ++totals.count;
    const base::Nanos length = base::spanNanos(start, end);
    totals.nanos = base::saturatingAdd(totals.nanos, length);
    totals.small += length < Facts::kSmallOpNanos ? 1 : 0;
    if (const auto attention = attention_ids->find(name_id); attention != attention_ids->end()) {
      facts.attention_ops.push_back({row.integer(3), row.integer(4), start, end, attention->second});
    }
  });
  if (!ops) return ops.error();
  auto collectives = reader.load<store::Collective>();
  if (!collectives) return collectives.error();
  for (const auto& collective : *collectives) {
    facts.collectives.push_back(
        hostCollective(collective.start_ns, collective.end_ns, collective.source, collective.async ? 1 : 0));
  }
  const auto by_start = [](const CollectiveSpan& a, const CollectiveSpan& b) { return a.start_ns < b.start_ns; };
  std::stable_sort(facts.collectives.begin(), facts.collectives.end(), by_start);
  auto nccl_kernels = nccl.finish();
  facts.collectives.insert(facts.collectives.end(), nccl_kernels.begin(), nccl_kernels.end());
  std::stable_sort(facts.attention_ops.begin(), facts.attention_ops.end(), [](const AttentionOp& a, const AttentionOp& b) {
    return std::tie(a.pid, a.tid, a.start_ns) < std::tie(b.pid, b.tid, b.start_ns);
  });
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
