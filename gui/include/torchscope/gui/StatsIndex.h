// Counts and summed durations per (kind, name) in time buckets, kept as prefix sums so that the
// totals of any time range cost two bisections per name, however many events the run has. Built
// while the store is scanned; read by the statistics view and the search. Qt-free.
//
// A slice counts in the bucket where it starts; range boundaries are rounded to the nearest bucket
// edge (buckets are 1/65536 of the run or finer).
//
// Error contract: nothing fails; queries before finish() see nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "torchscope/base/Clock.h"

namespace torchscope::gui {

using base::Nanos;

enum class StatKind : std::uint8_t { kKernel, kMemcpy, kMemset, kCpuOp, kApiCall, kSync, kNvtx, kCollective };
inline constexpr int kStatKindCount = 8;
[[nodiscard]] std::string_view statKindLabel(StatKind kind);

struct NameTotal {
  StatKind kind = StatKind::kKernel;
  std::uint32_t name = 0;  // Timeline::names
  std::uint64_t count = 0;
  Nanos total_ns = 0;
};

class StatsIndex {
 public:
  StatsIndex() = default;
  StatsIndex(Nanos origin, int shift) : origin_(origin), shift_(shift) {}

  // One slice; slices of one (kind, name) should come in start order (others are sorted by finish()).
  void add(StatKind kind, std::uint32_t name, Nanos start_ns, Nanos duration_ns);
  // Takes over the series of an index built with the same origin and shift (another loader thread).
  void absorb(StatsIndex&& other);
  // Sorts and accumulates; queries need it.
  void finish();

  [[nodiscard]] Nanos bucketNs() const { return Nanos{1} << shift_; }
  // Every (kind, name) with slices starting in [begin_ns, end_ns).
  [[nodiscard]] std::vector<NameTotal> totals(Nanos begin_ns, Nanos end_ns) const;
  // Slices whose name is set in `names` (a mask over Timeline::names), over the whole run.
  [[nodiscard]] std::uint64_t count(const std::vector<bool>& names) const;
  // The time range of the first bucket after (forward) or before `from_ns` that holds a slice
  // named in `names`; the bucket holding from_ns itself counts.
  [[nodiscard]] std::optional<std::pair<Nanos, Nanos>> nextBucket(const std::vector<bool>& names, Nanos from_ns,
                                                                  bool forward) const;

 private:
  struct Point {
    std::int64_t bucket = 0;
    std::uint64_t count = 0;  // per bucket while building, cumulative after finish()
    Nanos total_ns = 0;
  };
  struct Series {
    StatKind kind = StatKind::kKernel;
    std::uint32_t name = 0;
    std::vector<Point> points;
  };

  [[nodiscard]] std::int64_t nearestBucket(Nanos t) const;
  Series& series(StatKind kind, std::uint32_t name);

  Nanos origin_ = 0;
  int shift_ = 0;
  std::vector<Series> series_;
  std::vector<std::vector<std::int32_t>> series_of_name_;  // [kind][name] -> index in series_, -1 for none
};

}  // namespace torchscope::gui
