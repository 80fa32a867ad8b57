// One row of a timeline track: slices that never overlap, in start order, with a level-of-detail
// summary (a sparse mipmap of power-of-two time buckets) so that drawing a frame visits a number of
// items bounded by the pixel width, not by the number of slices. Qt-free.
//
// A lane is either exact (it keeps every slice) or summarised: past `exact_limit` slices it keeps
// only its buckets, down to a finest bucket width shared by the whole timeline, plus the slices
// longer than that width. A frame finer than the finest bucket then needs the lane's slices fetched
// from the store for the visible range (DetailWindow), so memory stays bounded by the bucket count
// whatever the number of events.
//
// Error contract: no function throws or fails; queries on an empty lane return nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "torchscope/base/Clock.h"
#include "torchscope/base/Saturating.h"

namespace torchscope::gui {

using base::Nanos;

// Which store table a slice comes from.
enum class RecordKind : std::uint8_t {
  kStep,
  kNvtx,
  kCpuOp,
  kApiCall,
  kSync,
  kKernel,
  kMemcpy,
  kMemset,
  kCompile,
  kGraphBreak,
  kRecompile,
  kCollective,  // a torch.distributed call or DDP bucket, on the thread that made it
};

// Tables with millions of rows: the timeline keeps their rows as slices only, and reads a row's
// columns from the store when it is selected. The other tables are kept whole in Timeline::records.
[[nodiscard]] constexpr bool isBulkKind(RecordKind kind) {
  return kind == RecordKind::kNvtx || kind == RecordKind::kCpuOp || kind == RecordKind::kApiCall ||
         kind == RecordKind::kKernel || kind == RecordKind::kMemcpy || kind == RecordKind::kMemset;
}

// A time interval on a lane; start == end for an instant (a marker).
struct Slice {
  Nanos start_ns = 0;
  Nanos end_ns = 0;
  // Bulk kinds: the row's id in its store table; other kinds: its index in Timeline::records.
  std::int64_t row = 0;
  std::uint32_t name = 0;  // index into Timeline::names
  RecordKind kind = RecordKind::kKernel;

  [[nodiscard]] Nanos duration() const { return base::spanNanos(start_ns, end_ns); }
  friend bool operator==(const Slice&, const Slice&) = default;
};

// Summary of the slices that start in one bucket of 2^shift ns.
struct LodBucket {
  std::int64_t bucket = 0;  // (start - origin) >> shift
  Nanos min_start_ns = 0;
  Nanos max_end_ns = 0;
  Nanos busy_ns = 0;  // summed durations
  std::uint32_t count = 0;
  Slice longest;  // the representative: its name gives the colour, a click selects it
};

struct LodLevel {
  int shift = 0;
  std::vector<LodBucket> buckets;  // non-empty buckets only, by bucket index
};

// Mapping between time and pixels for one frame; times at the int64 edges clamp instead of overflowing.
struct FrameScale {
  Nanos begin_ns = 0;
  double ns_per_px = 1;
  double width_px = 0;

  [[nodiscard]] double xAt(Nanos t) const { return static_cast<double>(base::saturatingSub(t, begin_ns)) / ns_per_px; }
  [[nodiscard]] Nanos timeAt(double x) const {
    return base::saturatingAdd(begin_ns, base::saturatingCast(x * ns_per_px));
  }
  [[nodiscard]] Nanos endNs() const { return timeAt(width_px); }
};

// One thing to draw: a single slice, or several slices folded into one pixel-wide run.
struct DrawItem {
  double x0 = 0;
  double x1 = 0;
  const Slice* representative = nullptr;  // owned by the lane
  std::uint32_t count = 1;                // slices folded into this item
  float fill = 1;                         // busy fraction of [x0, x1] (1 for a single slice)
};

class Lane {
 public:
  Lane() = default;
  // An exact lane. `slices` must be sorted by start and must not overlap (end <= next start).
  explicit Lane(std::vector<Slice> slices);

  [[nodiscard]] bool exact() const { return exact_; }
  // Exact lanes: every slice. Summarised lanes: the slices at least as long as the finest bucket.
  [[nodiscard]] const std::vector<Slice>& slices() const { return slices_; }
  [[nodiscard]] const std::vector<LodLevel>& levels() const { return levels_; }
  [[nodiscard]] std::size_t count() const { return count_; }
  [[nodiscard]] Nanos origin() const { return origin_; }
  [[nodiscard]] Nanos beginNs() const { return begin_ns_; }  // the first slice's start (0 when empty)
  [[nodiscard]] Nanos endNs() const { return end_ns_; }

  // True when the frame is finer than this summarised lane's finest bucket: its slices must be
  // fetched for the frame to be drawn exactly (until then collect() draws the finest buckets).
  [[nodiscard]] bool needsDetail(const FrameScale& frame) const;

  // Index of the first slice of slices() that ends at or after t (slices().size() when none).
  [[nodiscard]] std::size_t firstEndingFrom(Nanos t) const;

  // Items to draw for the frame, left to right: summaries from the coarsest level whose buckets are
  // no wider than a pixel, or visible slices with sub-pixel runs folded when zoomed in further.
  void collect(const FrameScale& frame, std::vector<DrawItem>& out) const;

  // The slice under time t, accepting misses of up to tolerance_ns for narrow slices and markers.
  // A summarised lane answers with the longest slice of the finest bucket there.
  [[nodiscard]] std::optional<Slice> hit(Nanos t, Nanos tolerance_ns) const;

 private:
  friend class LaneBuilder;

  void buildLevelsFromSlices();
  void buildCoarserLevels();
  void collectFromLevel(const LodLevel& level, const FrameScale& frame, std::vector<DrawItem>& out) const;
  void collectSlices(const FrameScale& frame, std::vector<DrawItem>& out) const;

  bool exact_ = true;
  std::vector<Slice> slices_;
  std::vector<LodLevel> levels_;  // finest first
  std::size_t count_ = 0;
  Nanos origin_ = 0;
  Nanos begin_ns_ = 0;
  Nanos end_ns_ = 0;
};

// Builds a lane from slices that arrive in start order: exact while it holds at most `exact_limit`
// slices, summarised at buckets of 2^finest_shift ns from `origin` beyond that.
class LaneBuilder {
 public:
  LaneBuilder(Nanos origin, int finest_shift, std::size_t exact_limit);
  void add(const Slice& slice);
  [[nodiscard]] Lane finish();

 private:
  void addToFinest(const Slice& slice);

  Lane lane_;
  int finest_shift_;
  std::size_t exact_limit_;
  LodLevel finest_;
};

// Gives each slice of a track its nesting depth, for slices that arrive in start order (the
// enclosing one first when two start together): one level below the innermost slice still open.
class DepthStack {
 public:
  std::size_t place(const Slice& slice);

 private:
  std::vector<Nanos> open_ends_;
};

// Splits possibly nested or overlapping slices into lanes by nesting depth (outermost first).
[[nodiscard]] std::vector<Lane> buildLanes(std::vector<Slice> slices);
// The order buildLanes() and the loaders place slices in: by start, the enclosing slice first.
[[nodiscard]] bool placedBefore(const Slice& a, const Slice& b);

}  // namespace torchscope::gui
