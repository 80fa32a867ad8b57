#include "torchscope/gui/StatsTable.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "torchscope/base/Saturating.h"
#include "torchscope/gui/Text.h"

namespace torchscope::gui {

void StatsTable::setRange(const Timeline& timeline, Nanos begin_ns, Nanos end_ns) {
  timeline_ = &timeline;
  span_ns_ = std::max<Nanos>(1, base::spanNanos(begin_ns, end_ns));
  rows_ = timeline.stats.totals(begin_ns, end_ns);
  std::size_t steps = 0;
  std::set<std::tuple<std::int64_t, std::int64_t>> stepping_threads;
  for (const store::Step& step : timeline.records.steps) {
    stepping_threads.emplace(step.pid, step.tid);
    if (step.start_ns >= begin_ns && step.start_ns < end_ns) ++steps;
  }
  steps_ = stepping_threads.empty() ? 0 : static_cast<double>(steps) / static_cast<double>(stepping_threads.size());
  sort(kTotal, false);
}

double StatsTable::value(std::size_t row, int column) const {
  const NameTotal& total = rows_[row];
  switch (column) {
    case kCount: return static_cast<double>(total.count);
    case kTotal: return static_cast<double>(total.total_ns);
    case kMean: return total.count == 0 ? 0 : static_cast<double>(total.total_ns) / static_cast<double>(total.count);
    case kPerStep: return steps_ > 0 ? static_cast<double>(total.total_ns) / steps_ : 0;
    case kShare: return static_cast<double>(total.total_ns) / static_cast<double>(span_ns_);
    default: return 0;
  }
}

void StatsTable::sort(int column, bool ascending) {
  const auto key = [&](const NameTotal& total) {
    const std::string_view name = timeline_ == nullptr ? std::string_view() : std::string_view(timeline_->names[total.name]);
    return std::make_tuple(static_cast<int>(total.kind), name);
  };
  std::vector<std::size_t> order(rows_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (column == kKind || column == kName) {
      const auto ka = key(rows_[a]);
      const auto kb = key(rows_[b]);
      const bool less = column == kKind ? ka < kb : std::get<1>(ka) < std::get<1>(kb);
      const bool greater = column == kKind ? kb < ka : std::get<1>(kb) < std::get<1>(ka);
      return ascending ? less : greater;
    }
    return ascending ? value(a, column) < value(b, column) : value(a, column) > value(b, column);
  });
  std::vector<NameTotal> sorted;
  sorted.reserve(rows_.size());
  for (const std::size_t i : order) sorted.push_back(rows_[i]);
  rows_ = std::move(sorted);
}

std::string StatsTable::cell(std::size_t row, int column) const {
  if (row >= rows_.size()) return {};
  const NameTotal& total = rows_[row];
  switch (column) {
    case kKind: return std::string(statKindLabel(total.kind));
    case kName: return timeline_ == nullptr ? std::string() : timeline_->names[total.name];
    case kCount: return std::to_string(total.count);
    case kTotal: return formatDuration(total.total_ns);
    case kMean: return formatDuration(base::saturatingCast(value(row, kMean)));
    case kPerStep: return steps_ > 0 ? formatDuration(base::saturatingCast(value(row, kPerStep))) : std::string("-");
    case kShare: return fmt::format("{:.1f}%", 100 * value(row, kShare));
    default: return {};
  }
}

std::string StatsTable::header(int column) {
  switch (column) {
    case kKind: return "Kind";
    case kName: return "Name";
    case kCount: return "Count";
    case kTotal: return "Total";
    case kMean: return "Mean";
    case kPerStep: return "Per step";
    case kShare: return "Share of range";
    default: return {};
  }
}

}  // namespace torchscope::gui
