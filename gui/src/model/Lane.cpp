#include "torchscope/gui/Lane.h"

#include <algorithm>
#include <cmath>

namespace torchscope::gui {

namespace {

// Levels stop merging once a level holds this few buckets: a frame never needs fewer.
constexpr std::size_t kCoarsestBuckets = 1;
// Candidates examined by hit(): enough for a pixel's worth of tiny slices.
constexpr int kMaxHitCandidates = 64;

float busyFraction(Nanos busy_ns, Nanos min_start_ns, Nanos max_end_ns, std::uint32_t count) {
  const Nanos extent = max_end_ns - min_start_ns;
  if (count <= 1 || extent <= 0) return 1.0F;
  return static_cast<float>(std::min<double>(1.0, static_cast<double>(busy_ns) / static_cast<double>(extent)));
}

Nanos duration(const Slice& slice) { return slice.end_ns - slice.start_ns; }

}  // namespace

Lane::Lane(std::vector<Slice> slices) : slices_(std::move(slices)) {
  if (!slices_.empty()) origin_ = slices_.front().start_ns;
  buildLevels();
}

void Lane::buildLevels() {
  if (slices_.empty()) return;
  // The finest level has about half as many buckets as slices; finer frames draw slices directly.
  const Nanos span = std::max<Nanos>(0, slices_.back().end_ns - origin_);
  const auto target = static_cast<Nanos>(std::max<std::size_t>(1, slices_.size() / 2));
  int shift = 0;
  while (shift < 62 && (span >> shift) + 1 > target) ++shift;

  LodLevel finest{shift, {}};
  for (std::uint32_t index = 0; index < slices_.size(); ++index) {
    const Slice& slice = slices_[index];
    const std::int64_t bucket = (slice.start_ns - origin_) >> shift;
    if (finest.buckets.empty() || finest.buckets.back().bucket != bucket) {
      finest.buckets.push_back({bucket, slice.start_ns, slice.end_ns, 0, index, 0, index});
    }
    LodBucket& current = finest.buckets.back();
    current.max_end_ns = std::max(current.max_end_ns, slice.end_ns);
    current.busy_ns += duration(slice);
    if (duration(slice) > duration(slices_[current.longest_slice])) current.longest_slice = index;
    ++current.count;
  }
  levels_.push_back(std::move(finest));

  while (levels_.back().buckets.size() > kCoarsestBuckets && levels_.back().shift < 62) {
    const LodLevel& finer = levels_.back();
    LodLevel coarser{finer.shift + 1, {}};
    coarser.buckets.reserve(finer.buckets.size() / 2 + 1);
    for (const LodBucket& part : finer.buckets) {
      const std::int64_t bucket = part.bucket >> 1;
      if (coarser.buckets.empty() || coarser.buckets.back().bucket != bucket) {
        LodBucket merged = part;
        merged.bucket = bucket;
        coarser.buckets.push_back(merged);
        continue;
      }
      LodBucket& merged = coarser.buckets.back();
      merged.max_end_ns = std::max(merged.max_end_ns, part.max_end_ns);
      merged.busy_ns += part.busy_ns;
      merged.count += part.count;
      if (duration(slices_[part.longest_slice]) > duration(slices_[merged.longest_slice])) {
        merged.longest_slice = part.longest_slice;
      }
    }
    levels_.push_back(std::move(coarser));
  }
}

std::size_t Lane::firstEndingFrom(Nanos t) const {
  // Non-overlapping slices sorted by start are sorted by end as well.
  const auto it = std::partition_point(slices_.begin(), slices_.end(),
                                       [t](const Slice& slice) { return slice.end_ns < t; });
  return static_cast<std::size_t>(it - slices_.begin());
}

void Lane::collect(const FrameScale& frame, std::vector<DrawItem>& out) const {
  if (slices_.empty() || frame.ns_per_px <= 0) return;
  const LodLevel* chosen = nullptr;
  for (const LodLevel& level : levels_) {
    if (std::ldexp(1.0, level.shift) > frame.ns_per_px) break;
    chosen = &level;
  }
  if (chosen != nullptr) {
    collectFromLevel(*chosen, frame, out);
  } else {
    collectSlices(frame, out);
  }
}

void Lane::collectFromLevel(const LodLevel& level, const FrameScale& frame, std::vector<DrawItem>& out) const {
  const std::size_t first = firstEndingFrom(frame.begin_ns);
  if (first == slices_.size()) return;
  const std::int64_t first_bucket = (slices_[first].start_ns - origin_) >> level.shift;
  auto it = std::partition_point(level.buckets.begin(), level.buckets.end(),
                                 [first_bucket](const LodBucket& bucket) { return bucket.bucket < first_bucket; });
  const Nanos end_ns = frame.endNs();
  for (; it != level.buckets.end() && it->min_start_ns <= end_ns; ++it) {
    out.push_back({frame.xAt(it->min_start_ns), frame.xAt(it->max_end_ns), it->longest_slice, it->count,
                   busyFraction(it->busy_ns, it->min_start_ns, it->max_end_ns, it->count)});
  }
}

void Lane::collectSlices(const FrameScale& frame, std::vector<DrawItem>& out) const {
  const Nanos end_ns = frame.endNs();
  std::size_t index = firstEndingFrom(frame.begin_ns);
  while (index < slices_.size() && slices_[index].start_ns <= end_ns) {
    const Slice& slice = slices_[index];
    const double x0 = frame.xAt(slice.start_ns);
    const double x1 = frame.xAt(slice.end_ns);
    if (x1 - x0 >= 1.0) {
      out.push_back({x0, x1, static_cast<std::uint32_t>(index), 1, 1.0F});
      ++index;
      continue;
    }
    // Fold every slice that starts in the same pixel column into one item.
    const Nanos boundary_ns = frame.timeAt(std::floor(x0) + 1.0);
    std::size_t longest = index;
    Nanos busy_ns = 0;
    Nanos max_end_ns = slice.end_ns;
    std::size_t next = index;
    for (; next < slices_.size() && (next == index || slices_[next].start_ns < boundary_ns); ++next) {
      busy_ns += duration(slices_[next]);
      max_end_ns = std::max(max_end_ns, slices_[next].end_ns);
      if (duration(slices_[next]) > duration(slices_[longest])) longest = next;
    }
    const auto count = static_cast<std::uint32_t>(next - index);
    out.push_back({x0, frame.xAt(max_end_ns), static_cast<std::uint32_t>(longest), count,
                   busyFraction(busy_ns, slice.start_ns, max_end_ns, count)});
    index = next;
  }
}

std::optional<std::size_t> Lane::hit(Nanos t, Nanos tolerance_ns) const {
  std::optional<std::size_t> best;
  Nanos best_distance = 0;
  int examined = 0;
  for (std::size_t index = firstEndingFrom(t - tolerance_ns);
       index < slices_.size() && slices_[index].start_ns <= t + tolerance_ns && examined < kMaxHitCandidates;
       ++index, ++examined) {
    const Slice& slice = slices_[index];
    const Nanos distance = t < slice.start_ns ? slice.start_ns - t : (t > slice.end_ns ? t - slice.end_ns : 0);
    if (!best || distance < best_distance) {
      best = index;
      best_distance = distance;
    }
    if (distance == 0) break;
  }
  return best;
}

std::vector<Lane> buildLanes(std::vector<Slice> slices) {
  std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns > b.end_ns;  // the enclosing slice first
  });
  // A slice goes one level below the innermost slice still open when it starts. Only slices that
  // ended are popped, so each level's slices never overlap.
  std::vector<Nanos> open_ends;
  std::vector<std::vector<Slice>> by_depth;
  for (const Slice& slice : slices) {
    while (!open_ends.empty() && open_ends.back() <= slice.start_ns) open_ends.pop_back();
    const std::size_t depth = open_ends.size();
    if (by_depth.size() <= depth) by_depth.resize(depth + 1);
    // Zero-length slices never enclose anything.
    if (slice.end_ns > slice.start_ns) open_ends.push_back(slice.end_ns);
    by_depth[depth].push_back(slice);
  }
  std::vector<Lane> lanes;
  lanes.reserve(by_depth.size());
  for (auto& depth_slices : by_depth) lanes.emplace_back(std::move(depth_slices));
  return lanes;
}

}  // namespace torchscope::gui
