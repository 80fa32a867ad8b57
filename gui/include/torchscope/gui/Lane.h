// One row of a timeline track: slices that never overlap, sorted by start, with a level-of-detail
// summary (a sparse mipmap of time buckets) so that drawing a zoomed-out frame visits a number of
// items bounded by the pixel width, not by the number of slices. Qt-free.
//
// Error contract: no function throws or fails; queries on an empty lane return nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "torchscope/store/Clock.h"

namespace torchscope::gui {

using store::Nanos;

// Which store table a slice comes from; `record` indexes that table's vector in Timeline.
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
};

// A time interval on a lane; start == end for an instant (a marker).
struct Slice {
  Nanos start_ns = 0;
  Nanos end_ns = 0;
  std::uint32_t name = 0;    // index into Timeline::names
  std::uint32_t record = 0;  // index into the record vector of `kind`
  RecordKind kind = RecordKind::kKernel;
};

// Summary of the slices that start in one bucket of 2^shift ns.
struct LodBucket {
  std::int64_t bucket = 0;  // (start - origin) >> shift
  Nanos min_start_ns = 0;
  Nanos max_end_ns = 0;
  Nanos busy_ns = 0;             // summed durations
  std::uint32_t first_slice = 0;  // slices [first_slice, first_slice + count) start here
  std::uint32_t count = 0;
  std::uint32_t longest_slice = 0;  // the representative: its name gives the colour
};

struct LodLevel {
  int shift = 0;
  std::vector<LodBucket> buckets;  // non-empty buckets only, by bucket index
};

// Mapping between time and pixels for one frame.
struct FrameScale {
  Nanos begin_ns = 0;
  double ns_per_px = 1;
  double width_px = 0;

  [[nodiscard]] double xAt(Nanos t) const { return static_cast<double>(t - begin_ns) / ns_per_px; }
  [[nodiscard]] Nanos timeAt(double x) const { return begin_ns + static_cast<Nanos>(x * ns_per_px); }
  [[nodiscard]] Nanos endNs() const { return timeAt(width_px); }
};

// One thing to draw: a single slice, or several slices folded into one pixel-wide run.
struct DrawItem {
  double x0 = 0;
  double x1 = 0;
  std::uint32_t representative = 0;  // slice index in the lane
  std::uint32_t count = 1;           // slices folded into this item
  float fill = 1;                    // busy fraction of [x0, x1] (1 for a single slice)
};

class Lane {
 public:
  Lane() = default;
  // `slices` must be sorted by start and must not overlap (end <= next start).
  explicit Lane(std::vector<Slice> slices);

  [[nodiscard]] const std::vector<Slice>& slices() const { return slices_; }
  [[nodiscard]] const std::vector<LodLevel>& levels() const { return levels_; }
  [[nodiscard]] Nanos origin() const { return origin_; }

  // Index of the first slice that ends at or after t (slices.size() when none).
  [[nodiscard]] std::size_t firstEndingFrom(Nanos t) const;

  // Items to draw for the frame, left to right: summaries from the coarsest level whose buckets are
  // no wider than a pixel, or visible slices with sub-pixel runs folded when zoomed in further.
  void collect(const FrameScale& frame, std::vector<DrawItem>& out) const;

  // The slice under time t, accepting misses of up to tolerance_ns for narrow slices and markers.
  [[nodiscard]] std::optional<std::size_t> hit(Nanos t, Nanos tolerance_ns) const;

 private:
  void buildLevels();
  void collectFromLevel(const LodLevel& level, const FrameScale& frame, std::vector<DrawItem>& out) const;
  void collectSlices(const FrameScale& frame, std::vector<DrawItem>& out) const;

  std::vector<Slice> slices_;
  std::vector<LodLevel> levels_;  // finest first
  Nanos origin_ = 0;
};

// Splits possibly nested or overlapping slices into lanes by nesting depth (outermost first).
[[nodiscard]] std::vector<Lane> buildLanes(std::vector<Slice> slices);

}  // namespace torchscope::gui
