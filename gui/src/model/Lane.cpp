#include "torchscope/gui/Lane.h"

#include <algorithm>
#include <cmath>

#include "LodPyramid.h"

namespace torchscope::gui {

namespace {

// Candidates examined by hit(): enough for a pixel's worth of tiny slices.
constexpr int kMaxHitCandidates = 64;

float busyFraction(Nanos busy_ns, Nanos min_start_ns, Nanos max_end_ns, std::uint32_t count) {
  const Nanos extent = base::spanNanos(min_start_ns, max_end_ns);
  if (count <= 1 || extent <= 0) return 1.0F;
  return static_cast<float>(std::min<double>(1.0, static_cast<double>(busy_ns) / static_cast<double>(extent)));
}

void merge(LodBucket& into, const LodBucket& part) {
  into.max_end_ns = std::max(into.max_end_ns, part.max_end_ns);
  into.busy_ns = base::saturatingAdd(into.busy_ns, part.busy_ns);
  into.count += part.count;
  if (part.longest.duration() > into.longest.duration()) into.longest = part.longest;
}

void addSlice(LodLevel& level, Nanos origin, const Slice& slice) {
  const std::int64_t bucket = base::saturatingSub(slice.start_ns, origin) >> level.shift;
  if (level.buckets.empty() || level.buckets.back().bucket != bucket) {
    level.buckets.push_back({bucket, slice.start_ns, slice.end_ns, slice.duration(), 1, slice});
    return;
  }
  merge(level.buckets.back(), {bucket, slice.start_ns, slice.end_ns, slice.duration(), 1, slice});
}

}  // namespace

Lane::Lane(std::vector<Slice> slices) : slices_(std::move(slices)) {
  count_ = slices_.size();
  if (!slices_.empty()) {
    origin_ = slices_.front().start_ns;
    begin_ns_ = origin_;
    end_ns_ = slices_.back().end_ns;
  }
  buildLevelsFromSlices();
}

void Lane::buildLevelsFromSlices() {
  if (slices_.empty()) return;
  // The finest level has about half as many buckets as slices; finer frames draw slices directly.
  const Nanos span = base::spanNanos(origin_, end_ns_);
  const auto target = static_cast<Nanos>(std::max<std::size_t>(1, slices_.size() / 2));
  int shift = 0;
  while (shift < 62 && (span >> shift) >= target) ++shift;  // (span >> shift) + 1 buckets, more than the target
  LodLevel finest{shift, {}};
  for (const Slice& slice : slices_) addSlice(finest, origin_, slice);
  levels_.push_back(std::move(finest));
  buildCoarserLevels();
}

void Lane::buildCoarserLevels() {
  addCoarserLevels(levels_, [](auto& into, const auto& part) { merge(into, part); });
}

bool Lane::needsDetail(const FrameScale& frame) const {
  return !exact_ && !levels_.empty() && std::ldexp(1.0, levels_.front().shift) > frame.ns_per_px;
}

std::size_t Lane::firstEndingFrom(Nanos t) const {
  // Non-overlapping slices sorted by start are sorted by end as well.
  const auto it = std::partition_point(slices_.begin(), slices_.end(),
                                       [t](const Slice& slice) { return slice.end_ns < t; });
  return static_cast<std::size_t>(it - slices_.begin());
}

void Lane::collect(const FrameScale& frame, std::vector<DrawItem>& out) const {
  if (count_ == 0 || frame.ns_per_px <= 0) return;
  const LodLevel* chosen = nullptr;
  for (const LodLevel& level : levels_) {
    if (std::ldexp(1.0, level.shift) > frame.ns_per_px) break;
    chosen = &level;
  }
  if (chosen == nullptr && !exact_) chosen = &levels_.front();  // until the detail arrives
  if (chosen != nullptr) {
    collectFromLevel(*chosen, frame, out);
  } else {
    collectSlices(frame, out);
  }
}

void Lane::collectFromLevel(const LodLevel& level, const FrameScale& frame, std::vector<DrawItem>& out) const {
  // Bucket ends grow with their index (slices are disjoint), so the first visible bucket is found by bisection.
  auto it = std::partition_point(level.buckets.begin(), level.buckets.end(),
                                 [&frame](const LodBucket& bucket) { return bucket.max_end_ns < frame.begin_ns; });
  const Nanos end_ns = frame.endNs();
  // The chosen level's buckets are half a pixel to a pixel wide: the buckets that start in one pixel
  // column are folded into one item, so that a zoomed-out frame draws at most one item a pixel.
  while (it != level.buckets.end() && it->min_start_ns <= end_ns) {
    const double x0 = frame.xAt(it->min_start_ns);
    const Nanos boundary_ns = frame.timeAt(std::floor(x0) + 1.0);
    const Nanos min_start_ns = it->min_start_ns;
    const LodBucket* longest = &*it;
    Nanos max_end_ns = it->max_end_ns;
    Nanos busy_ns = 0;
    std::uint32_t count = 0;
    for (auto first = it; it != level.buckets.end() && (it == first || it->min_start_ns < boundary_ns); ++it) {
      max_end_ns = std::max(max_end_ns, it->max_end_ns);
      busy_ns = base::saturatingAdd(busy_ns, it->busy_ns);
      count += it->count;
      if (it->longest.duration() > longest->longest.duration()) longest = &*it;
    }
    out.push_back({x0, frame.xAt(max_end_ns), &longest->longest, count,
                   busyFraction(busy_ns, min_start_ns, max_end_ns, count)});
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
      out.push_back({x0, x1, &slice, 1, 1.0F});
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
      busy_ns = base::saturatingAdd(busy_ns, slices_[next].duration());
      max_end_ns = std::max(max_end_ns, slices_[next].end_ns);
      if (slices_[next].duration() > slices_[longest].duration()) longest = next;
    }
    const auto count = static_cast<std::uint32_t>(next - index);
    out.push_back({x0, frame.xAt(max_end_ns), &slices_[longest], count,
                   busyFraction(busy_ns, slice.start_ns, max_end_ns, count)});
    index = next;
  }
}

std::optional<Slice> Lane::hit(Nanos t, Nanos tolerance_ns) const {
  const auto distance = [t](Nanos start, Nanos end) {
    return std::max(base::spanNanos(t, start), base::spanNanos(end, t));
  };
  const Nanos from = base::saturatingSub(t, tolerance_ns);
  const Nanos until = base::saturatingAdd(t, tolerance_ns);
  std::optional<Slice> best;
  Nanos best_distance = 0;
  int examined = 0;
  if (exact_) {
    for (std::size_t index = firstEndingFrom(from);
         index < slices_.size() && slices_[index].start_ns <= until && examined < kMaxHitCandidates;
         ++index, ++examined) {
      const Nanos d = distance(slices_[index].start_ns, slices_[index].end_ns);
      if (!best || d < best_distance) {
        best = slices_[index];
        best_distance = d;
      }
      if (d == 0) break;
    }
    return best;
  }
  const auto& buckets = levels_.front().buckets;
  auto it = std::partition_point(buckets.begin(), buckets.end(), [&](const LodBucket& bucket) {
    return bucket.max_end_ns < from;
  });
  for (; it != buckets.end() && it->min_start_ns <= until && examined < kMaxHitCandidates;
       ++it, ++examined) {
    const Nanos d = distance(it->min_start_ns, it->max_end_ns);
    if (!best || d < best_distance) {
      best = it->longest;
      best_distance = d;
    }
  }
  return best;
}

LaneBuilder::LaneBuilder(Nanos origin, int finest_shift, std::size_t exact_limit)
    : finest_shift_(finest_shift), exact_limit_(exact_limit), finest_{finest_shift, {}} {
  lane_.origin_ = origin;
}

void LaneBuilder::add(const Slice& slice) {
  // A summarised lane's origin is the timeline's, not its first slice's.
  if (lane_.count_ == 0) lane_.begin_ns_ = slice.start_ns;
  ++lane_.count_;
  lane_.end_ns_ = std::max(lane_.end_ns_, slice.end_ns);
  addToFinest(slice);
  const Nanos long_ns = Nanos{1} << finest_shift_;
  if (lane_.exact_) {
    lane_.slices_.push_back(slice);
    if (lane_.slices_.size() <= exact_limit_) return;
    // Too many to keep: from now on only the slices that outlast a finest bucket are kept.
    lane_.exact_ = false;
    std::erase_if(lane_.slices_, [long_ns](const Slice& kept) { return kept.duration() < long_ns; });
    lane_.slices_.shrink_to_fit();
  } else if (slice.duration() >= long_ns) {
    lane_.slices_.push_back(slice);
  }
}

void LaneBuilder::addToFinest(const Slice& slice) { addSlice(finest_, lane_.origin_, slice); }

Lane LaneBuilder::finish() {
  Lane lane = std::move(lane_);
  if (lane.count_ == 0) return Lane{};
  if (lane.exact_) {
    lane.origin_ = lane.slices_.front().start_ns;
    lane.buildLevelsFromSlices();
  } else {
    lane.levels_.push_back(std::move(finest_));
    lane.buildCoarserLevels();
  }
  return lane;
}

std::size_t DepthStack::place(const Slice& slice) {
  // Only slices that ended are popped, so each level's slices never overlap.
  while (!open_ends_.empty() && open_ends_.back() <= slice.start_ns) open_ends_.pop_back();
  const std::size_t depth = open_ends_.size();
  // Zero-length slices never enclose anything.
  if (slice.end_ns > slice.start_ns) open_ends_.push_back(slice.end_ns);
  return depth;
}

bool placedBefore(const Slice& a, const Slice& b) {
  if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
  return a.end_ns > b.end_ns;  // the enclosing slice first
}

std::vector<Lane> buildLanes(std::vector<Slice> slices) {
  std::sort(slices.begin(), slices.end(), placedBefore);
  DepthStack depths;
  std::vector<std::vector<Slice>> by_depth;
  for (const Slice& slice : slices) {
    const std::size_t depth = depths.place(slice);
    if (by_depth.size() <= depth) by_depth.resize(depth + 1);
    by_depth[depth].push_back(slice);
  }
  std::vector<Lane> lanes;
  lanes.reserve(by_depth.size());
  for (auto& depth_slices : by_depth) lanes.emplace_back(std::move(depth_slices));
  return lanes;
}

}  // namespace torchscope::gui
