// Counter lanes (memory series) without Qt: their level-of-detail buckets against a brute-force
// min/max, frames drawn from a bounded number of spans, a summarised lane of millions of samples
// that still shows a one-sample spike, and the value held under a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "torchscope/gui/CounterLane.h"

namespace torchscope::gui {
namespace {

// A deterministic random walk with irregular sampling intervals.
std::vector<CounterSample> walk(std::size_t count, Nanos start_ns) {
  std::vector<CounterSample> samples;
  samples.reserve(count);
  std::uint64_t state = 12345;
  const auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  Nanos t = start_ns;
  std::int64_t value = 1 << 30;
  for (std::size_t i = 0; i < count; ++i) {
    t += 1 + static_cast<Nanos>(next() % 5000);
    value += static_cast<std::int64_t>(next() % 2001) - 1000;
    samples.push_back({t, value});
  }
  return samples;
}

// The spans of a frame that touch pixel column x.
std::int64_t highestAt(const std::vector<CounterSpan>& spans, double x) {
  std::int64_t highest = std::numeric_limits<std::int64_t>::min();
  for (const CounterSpan& span : spans) {
    if (span.x0 <= x + 1 && std::max(span.x1, span.x0 + 1) >= x) highest = std::max(highest, span.high);
  }
  return highest;
}

TEST(CounterLane, BucketsHoldTheMinMaxAndLastOfTheirSamples) {
  const auto samples = walk(5000, 1'000'000);
  const CounterLane lane(samples);
  ASSERT_TRUE(lane.exact());
  EXPECT_EQ(lane.count(), samples.size());
  EXPECT_EQ(lane.beginNs(), samples.front().ts_ns);
  EXPECT_EQ(lane.endNs(), samples.back().ts_ns);
  const auto [low, high] = std::minmax_element(samples.begin(), samples.end(), [](const auto& a, const auto& b) {
    return a.value < b.value;
  });
  EXPECT_EQ(lane.minValue(), low->value);
  EXPECT_EQ(lane.maxValue(), high->value);

  ASSERT_GE(lane.levels().size(), 2U);
  EXPECT_EQ(lane.levels().back().buckets.size(), 1U);
  for (const CounterLevel& level : lane.levels()) {
    std::size_t counted = 0;
    Nanos previous_last = std::numeric_limits<Nanos>::min();
    for (const CounterBucket& bucket : level.buckets) {
      EXPECT_GT(bucket.first_ns, previous_last) << "buckets are disjoint and in time order";
      previous_last = bucket.last_ns;
      // Brute force over the samples the bucket spans.
      const auto first = std::partition_point(samples.begin(), samples.end(),
                                              [&](const CounterSample& s) { return s.ts_ns < bucket.first_ns; });
      const auto last = std::partition_point(samples.begin(), samples.end(),
                                             [&](const CounterSample& s) { return s.ts_ns <= bucket.last_ns; });
      ASSERT_EQ(static_cast<std::size_t>(last - first), bucket.count) << "level " << level.shift;
      std::int64_t min = first->value;
      std::int64_t max = first->value;
      for (auto it = first; it != last; ++it) {
        min = std::min(min, it->value);
        max = std::max(max, it->value);
        EXPECT_EQ((it->ts_ns - samples.front().ts_ns) >> level.shift, bucket.bucket);
      }
      EXPECT_EQ(bucket.min, min);
      EXPECT_EQ(bucket.max, max);
      EXPECT_EQ(bucket.last, std::prev(last)->value);
      counted += bucket.count;
    }
    EXPECT_EQ(counted, samples.size());
  }
}

TEST(CounterLane, ZoomedInFrameHoldsEachSampleUntilTheNext) {
  std::vector<CounterSample> samples;
  for (int i = 0; i < 10; ++i) samples.push_back({Nanos{1'000'000'000} * i, 100 + 10 * i});
  const CounterLane lane(samples);
  // 1 ms per pixel over seconds 2.5 to 4.5: the value of second 2 held into the frame, then 3 and 4.
  const FrameScale frame{2'500'000'000, 1'000'000, 2000};
  std::vector<CounterSpan> spans;
  lane.collect(frame, spans);
  ASSERT_EQ(spans.size(), 3U);
  EXPECT_EQ(spans[0].low, 120);
  EXPECT_DOUBLE_EQ(spans[0].x0, -500);
  EXPECT_DOUBLE_EQ(spans[0].x1, 500);
  EXPECT_EQ(spans[1].low, 130);
  EXPECT_DOUBLE_EQ(spans[1].x0, 500);
  EXPECT_DOUBLE_EQ(spans[1].x1, 1500);
  EXPECT_EQ(spans[2].low, 140);
  EXPECT_EQ(spans[2].high, 140);

  EXPECT_FALSE(lane.valueAt(-1).has_value());
  EXPECT_FALSE(lane.valueAt(samples.back().ts_ns + 1).has_value());
  const auto held = lane.valueAt(3'700'000'000);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->low, 130);
  EXPECT_EQ(held->ts_ns, 3'000'000'000);
}

TEST(CounterLane, SamplesInOnePixelFoldIntoOneSpanWithTheirRange) {
  // A burst of 100 samples 10 ns apart between two far ones, drawn at 1 us per pixel.
  std::vector<CounterSample> samples{{0, 5}};
  for (int i = 0; i < 100; ++i) samples.push_back({1'000'000 + 10 * i, i == 40 ? 900 : 50 + i});
  samples.push_back({2'000'000, 7});
  const CounterLane lane(samples);
  std::vector<CounterSpan> spans;
  lane.collect({0, 1000, 2000}, spans);
  ASSERT_LE(spans.size(), 6U);
  const auto burst = std::find_if(spans.begin(), spans.end(), [](const CounterSpan& span) { return span.high == 900; });
  ASSERT_NE(burst, spans.end());
  EXPECT_EQ(burst->low, 50);
  EXPECT_NEAR(burst->x0, 1000, 1);
  EXPECT_EQ(highestAt(spans, 1500), 50 + 99);  // the burst's last value is held until the next sample
}

TEST(CounterLane, MillionsOfSamplesKeepOnlyBucketsAndStillShowAOneSampleSpike) {
  constexpr std::size_t kSamples = 4'000'000;
  constexpr Nanos kStride = 1000;
  constexpr int kFinestShift = 20;  // about 4000 finest buckets over the 4 s
  constexpr std::size_t kSpike = 2'345'678;
  CounterLaneBuilder builder(0, kFinestShift, /*exact_limit=*/1000);
  std::int64_t expected_max = 0;
  for (std::size_t i = 0; i < kSamples; ++i) {
    // A sawtooth between 1 and 2 GiB, with one sample far above it.
    const std::int64_t value = (std::int64_t{1} << 30) + static_cast<std::int64_t>(i % 100'000) * 1000 +
                               (i == kSpike ? std::int64_t{1} << 32 : 0);
    expected_max = std::max(expected_max, value);
    builder.add({static_cast<Nanos>(i) * kStride, value});
  }
  const CounterLane lane = builder.finish();
  EXPECT_FALSE(lane.exact());
  EXPECT_TRUE(lane.samples().empty());
  EXPECT_EQ(lane.count(), kSamples);
  EXPECT_EQ(lane.maxValue(), expected_max);
  EXPECT_EQ(lane.minValue(), std::int64_t{1} << 30);
  EXPECT_EQ(lane.levels().front().shift, kFinestShift);
  EXPECT_LE(lane.levels().front().buckets.size(), (kSamples * kStride >> kFinestShift) + 1);

  // The whole run on 1000 pixels: a bounded number of spans, the spike in its pixel column.
  const FrameScale whole{0, static_cast<double>(kSamples * kStride) / 1000.0, 1000};
  std::vector<CounterSpan> spans;
  lane.collect(whole, spans);
  EXPECT_LE(spans.size(), 4 * 1000U);
  const double spike_x = whole.xAt(static_cast<Nanos>(kSpike) * kStride);
  EXPECT_EQ(highestAt(spans, spike_x), expected_max);
  EXPECT_LT(highestAt(spans, spike_x + 20), expected_max);

  // Zoomed in past the finest bucket: the finest buckets' envelope, still bounded and still the spike.
  const Nanos spike_ns = static_cast<Nanos>(kSpike) * kStride;
  const FrameScale close{spike_ns - 500'000, 1000, 1000};
  spans.clear();
  lane.collect(close, spans);
  EXPECT_LE(spans.size(), 8U);
  EXPECT_EQ(highestAt(spans, close.xAt(spike_ns)), expected_max);
  const auto at_spike = lane.valueAt(spike_ns);
  ASSERT_TRUE(at_spike.has_value());
  EXPECT_LE(at_spike->low, at_spike->high);
  EXPECT_EQ(at_spike->high, expected_max);
}

}  // namespace
}  // namespace torchscope::gui
