#include "torchscope/gui/StatsIndex.h"

#include <algorithm>
#include <cmath>

#include "torchscope/base/Saturating.h"

namespace torchscope::gui {

std::string_view statKindLabel(StatKind kind) {
  switch (kind) {
    case StatKind::kKernel: return "kernel";
    case StatKind::kMemcpy: return "memcpy";
    case StatKind::kMemset: return "memset";
    case StatKind::kCpuOp: return "CPU op";
    case StatKind::kApiCall: return "CUDA API";
    case StatKind::kSync: return "sync";
    case StatKind::kNvtx: return "NVTX";
    case StatKind::kCollective: return "collective";
  }
  return "";
}

StatsIndex::Series& StatsIndex::series(StatKind kind, std::uint32_t name) {
  if (series_of_name_.empty()) series_of_name_.resize(kStatKindCount);
  auto& of_name = series_of_name_[static_cast<std::size_t>(kind)];
  if (of_name.size() <= name) of_name.resize(std::max<std::size_t>(name + 1, of_name.size() * 2), -1);
  if (of_name[name] < 0) {
    of_name[name] = static_cast<std::int32_t>(series_.size());
    series_.push_back({kind, name, {}});
  }
  return series_[static_cast<std::size_t>(of_name[name])];
}

void StatsIndex::add(StatKind kind, std::uint32_t name, Nanos start_ns, Nanos duration_ns) {
  auto& points = series(kind, name).points;
  const std::int64_t bucket = base::saturatingSub(start_ns, origin_) >> shift_;
  if (!points.empty() && points.back().bucket == bucket) {
    ++points.back().count;
    points.back().total_ns = base::saturatingAdd(points.back().total_ns, duration_ns);
  } else {
    points.push_back({bucket, 1, duration_ns});
  }
}

void StatsIndex::absorb(StatsIndex&& other) {
  for (Series& part : other.series_) {
    auto& points = series(part.kind, part.name).points;
    points.insert(points.end(), part.points.begin(), part.points.end());
  }
  other.series_.clear();
  other.series_of_name_.clear();
}

void StatsIndex::finish() {
  for (Series& one : series_) {
    auto& points = one.points;
    const auto by_bucket = [](const Point& a, const Point& b) { return a.bucket < b.bucket; };
    if (!std::is_sorted(points.begin(), points.end(), by_bucket)) std::stable_sort(points.begin(), points.end(), by_bucket);
    std::vector<Point> cumulative;
    cumulative.reserve(points.size());
    for (const Point& point : points) {
      if (!cumulative.empty() && cumulative.back().bucket == point.bucket) {
        cumulative.back().count += point.count;
        cumulative.back().total_ns = base::saturatingAdd(cumulative.back().total_ns, point.total_ns);
        continue;
      }
      Point sum = point;
      if (!cumulative.empty()) {
        sum.count += cumulative.back().count;
        sum.total_ns = base::saturatingAdd(sum.total_ns, cumulative.back().total_ns);
      }
      cumulative.push_back(sum);
    }
    points = std::move(cumulative);
  }
}

std::int64_t StatsIndex::nearestBucket(Nanos t) const {
  return base::saturatingCast(std::round(std::ldexp(static_cast<double>(base::saturatingSub(t, origin_)), -shift_)));
}

std::vector<NameTotal> StatsIndex::totals(Nanos begin_ns, Nanos end_ns) const {
  const std::int64_t first = nearestBucket(begin_ns);
  const std::int64_t last = nearestBucket(end_ns);  // exclusive
  // The cumulative sums of the buckets before `bucket`.
  const auto before = [](const std::vector<Point>& points, std::int64_t bucket) -> Point {
    const auto it = std::partition_point(points.begin(), points.end(),
                                         [bucket](const Point& point) { return point.bucket < bucket; });
    return it == points.begin() ? Point{} : *(it - 1);
  };
  std::vector<NameTotal> out;
  for (const Series& one : series_) {
    const Point low = before(one.points, first);
    const Point high = before(one.points, last);
    if (high.count > low.count) {
      // Sums that reached INT64_MAX stay there: the difference of two of them is no time, not a negative one.
      out.push_back({one.kind, one.name, high.count - low.count, base::spanNanos(low.total_ns, high.total_ns)});
    }
  }
  return out;
}

std::uint64_t StatsIndex::count(const std::vector<bool>& names) const {
  std::uint64_t total = 0;
  for (const Series& one : series_) {
    if (one.name < names.size() && names[one.name] && !one.points.empty()) total += one.points.back().count;
  }
  return total;
}

std::optional<std::pair<Nanos, Nanos>> StatsIndex::nextBucket(const std::vector<bool>& names, Nanos from_ns,
                                                              bool forward) const {
  const std::int64_t from = base::saturatingSub(from_ns, origin_) >> shift_;
  std::optional<std::int64_t> best;
  for (const Series& one : series_) {
    if (one.name >= names.size() || !names[one.name]) continue;
    const auto& points = one.points;
    if (forward) {
      const auto it = std::partition_point(points.begin(), points.end(),
                                           [from](const Point& point) { return point.bucket < from; });
      if (it != points.end() && (!best || it->bucket < *best)) best = it->bucket;
    } else {
      const auto it = std::partition_point(points.begin(), points.end(),
                                           [from](const Point& point) { return point.bucket <= from; });
      if (it != points.begin() && (!best || (it - 1)->bucket > *best)) best = (it - 1)->bucket;
    }
  }
  if (!best) return std::nullopt;
  const Nanos start = base::saturatingAdd(origin_, *best << shift_);  // a bucket's own start fits in an int64
  return std::make_pair(start, base::saturatingAdd(start, bucketNs()));
}

}  // namespace torchscope::gui
