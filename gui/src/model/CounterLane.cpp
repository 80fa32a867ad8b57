#include "torchscope/gui/CounterLane.h"

#include <algorithm>
#include <cmath>

#include "LodPyramid.h"

namespace torchscope::gui {

namespace {

void merge(CounterBucket& into, const CounterBucket& later) {
  into.last_ns = later.last_ns;
  into.min = std::min(into.min, later.min);
  into.max = std::max(into.max, later.max);
  into.last = later.last;
  into.count += later.count;
}

void addSample(CounterLevel& level, Nanos origin, const CounterSample& sample) {
  // An arithmetic shift: samples before the origin fall in negative buckets.
  const std::int64_t bucket = base::saturatingSub(sample.ts_ns, origin) >> level.shift;
  const CounterBucket single{bucket, sample.ts_ns, sample.ts_ns, sample.value, sample.value, sample.value, 1};
  if (level.buckets.empty() || level.buckets.back().bucket != bucket) {
    level.buckets.push_back(single);
  } else {
    merge(level.buckets.back(), single);
  }
}

}  // namespace

CounterLane::CounterLane(std::vector<CounterSample> samples) {
  for (const CounterSample& sample : samples) add(sample);
  samples_ = std::move(samples);
  buildLevelsFromSamples();
}

void CounterLane::add(const CounterSample& sample) {
  if (count_ == 0) {
    begin_ns_ = sample.ts_ns;
    min_ = max_ = sample.value;
  }
  ++count_;
  end_ns_ = sample.ts_ns;
  min_ = std::min(min_, sample.value);
  max_ = std::max(max_, sample.value);
}

void CounterLane::buildLevelsFromSamples() {
  if (samples_.empty()) return;
  origin_ = samples_.front().ts_ns;
  // The finest level has about half as many buckets as samples; finer frames draw samples directly.
  const Nanos span = base::spanNanos(origin_, end_ns_);
  const auto target = static_cast<Nanos>(std::max<std::size_t>(1, samples_.size() / 2));
  int shift = 0;
  while (shift < 62 && (span >> shift) >= target) ++shift;  // (span >> shift) + 1 buckets, more than the target
  CounterLevel finest{shift, {}};
  for (const CounterSample& sample : samples_) addSample(finest, origin_, sample);
  levels_.push_back(std::move(finest));
  buildCoarserLevels();
}

void CounterLane::buildCoarserLevels() {
  addCoarserLevels(levels_, [](auto& into, const auto& part) { merge(into, part); });
}

void CounterLane::collect(const FrameScale& frame, std::vector<CounterSpan>& out) const {
  if (count_ == 0 || frame.ns_per_px <= 0) return;
  const CounterLevel* chosen = nullptr;
  for (const CounterLevel& level : levels_) {
    if (std::ldexp(1.0, level.shift) > frame.ns_per_px) break;
    chosen = &level;
  }
  if (chosen == nullptr && !exact_) chosen = &levels_.front();  // the samples are not kept
  if (chosen != nullptr) {
    collectFromLevel(*chosen, frame, out);
  } else {
    collectSamples(frame, out);
  }
}

void CounterLane::collectFromLevel(const CounterLevel& level, const FrameScale& frame,
                                   std::vector<CounterSpan>& out) const {
  const auto& buckets = level.buckets;
  auto it = std::partition_point(buckets.begin(), buckets.end(),
                                 [&frame](const CounterBucket& bucket) { return bucket.last_ns < frame.begin_ns; });
  if (it != buckets.begin()) --it;  // its last value is held into the frame
  const Nanos end_ns = frame.endNs();
  for (; it != buckets.end() && it->first_ns <= end_ns; ++it) {
    out.push_back({frame.xAt(it->first_ns), frame.xAt(it->last_ns), it->min, it->max});
    const auto next = std::next(it);
    const Nanos hold_until = next != buckets.end() ? next->first_ns : it->last_ns;
    out.push_back({frame.xAt(it->last_ns), frame.xAt(hold_until), it->last, it->last});
  }
}

void CounterLane::collectSamples(const FrameScale& frame, std::vector<CounterSpan>& out) const {
  const Nanos end_ns = frame.endNs();
  // Start at the sample held when the frame begins.
  auto first = std::partition_point(samples_.begin(), samples_.end(),
                                    [&frame](const CounterSample& sample) { return sample.ts_ns <= frame.begin_ns; });
  std::size_t index = first == samples_.begin() ? 0 : static_cast<std::size_t>(first - samples_.begin()) - 1;
  while (index < samples_.size() && samples_[index].ts_ns <= end_ns) {
    const CounterSample& sample = samples_[index];
    const double x0 = frame.xAt(sample.ts_ns);
    // Fold the samples taken in the same pixel column into one span.
    const Nanos column_end_ns = frame.timeAt(std::floor(x0) + 1.0);
    std::size_t last = index;
    std::int64_t low = sample.value;
    std::int64_t high = sample.value;
    while (last + 1 < samples_.size() && samples_[last + 1].ts_ns < column_end_ns) {
      ++last;
      low = std::min(low, samples_[last].value);
      high = std::max(high, samples_[last].value);
    }
    if (last > index) out.push_back({x0, frame.xAt(samples_[last].ts_ns), low, high});
    const Nanos hold_until = last + 1 < samples_.size() ? samples_[last + 1].ts_ns : samples_[last].ts_ns;
    out.push_back({frame.xAt(samples_[last].ts_ns), frame.xAt(hold_until), samples_[last].value, samples_[last].value});
    index = last + 1;
  }
}

std::optional<CounterValue> CounterLane::valueAt(Nanos t) const {
  if (count_ == 0 || t < begin_ns_ || t > end_ns_) return std::nullopt;
  if (exact_) {
    const auto after = std::partition_point(samples_.begin(), samples_.end(),
                                            [t](const CounterSample& sample) { return sample.ts_ns <= t; });
    const CounterSample& held = *std::prev(after);
    return CounterValue{held.value, held.value, held.ts_ns};
  }
  const auto& buckets = levels_.front().buckets;
  const auto after = std::partition_point(buckets.begin(), buckets.end(),
                                          [t](const CounterBucket& bucket) { return bucket.first_ns <= t; });
  const CounterBucket& bucket = *std::prev(after);
  if (t >= bucket.last_ns) return CounterValue{bucket.last, bucket.last, bucket.last_ns};
  return CounterValue{bucket.min, bucket.max, bucket.first_ns};
}

CounterLaneBuilder::CounterLaneBuilder(Nanos origin, int finest_shift, std::size_t exact_limit)
    : exact_limit_(exact_limit), finest_{finest_shift, {}} {
  lane_.origin_ = origin;
}

void CounterLaneBuilder::add(const CounterSample& sample) {
  lane_.add(sample);
  addSample(finest_, lane_.origin_, sample);
  if (!lane_.exact_) return;
  lane_.samples_.push_back(sample);
  if (lane_.samples_.size() <= exact_limit_) return;
  // Too many to keep: from now on the buckets alone describe the lane.
  lane_.exact_ = false;
  lane_.samples_.clear();
  lane_.samples_.shrink_to_fit();
}

CounterLane CounterLaneBuilder::finish() {
  CounterLane lane = std::move(lane_);
  if (lane.count_ == 0) return CounterLane{};
  if (lane.exact_) {
    lane.buildLevelsFromSamples();
  } else {
    lane.levels_.push_back(std::move(finest_));
    lane.buildCoarserLevels();
  }
  return lane;
}

}  // namespace torchscope::gui
