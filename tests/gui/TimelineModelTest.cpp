// The Qt-free timeline model: lanes, level-of-detail summaries against a brute-force reference,
// frame collection, hit testing, zoom maths and the ruler.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "torchscope/gui/Lane.h"
#include "torchscope/gui/Text.h"
#include "torchscope/gui/Viewport.h"

namespace torchscope::gui {
namespace {

// Non-overlapping slices with random gaps and durations, some of them instants.
std::vector<Slice> randomLaneSlices(std::size_t count, unsigned seed) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<Nanos> gap(0, 5000);
  std::uniform_int_distribution<Nanos> length(0, 3000);
  std::vector<Slice> slices;
  Nanos t = 1'000'000;
  for (std::size_t i = 0; i < count; ++i) {
    t += gap(random);
    const Nanos end = t + (i % 17 == 0 ? 200'000 : length(random));
    slices.push_back({t, end, static_cast<std::uint32_t>(i % 7), static_cast<std::uint32_t>(i), RecordKind::kKernel});
    t = end;
  }
  return slices;
}

TEST(Lane, BuildLanesNestsByDepthAndKeepsEachLaneDisjoint) {
  std::vector<Slice> slices{{0, 100, 0, 0, RecordKind::kCpuOp},   {10, 50, 1, 1, RecordKind::kCpuOp},
                            {20, 30, 2, 2, RecordKind::kCpuOp},   {60, 90, 3, 3, RecordKind::kCpuOp},
                            {80, 120, 4, 4, RecordKind::kCpuOp},  {200, 200, 5, 5, RecordKind::kCpuOp}};
  const auto lanes = buildLanes(slices);
  ASSERT_EQ(lanes.size(), 3U);
  EXPECT_EQ(lanes[0].slices().size(), 2U);  // [0,100] and the instant at 200
  EXPECT_EQ(lanes[1].slices().size(), 2U);  // [10,50], [60,90]
  EXPECT_EQ(lanes[2].slices().size(), 2U);  // [20,30] and the partial overlap [80,120]

  std::mt19937 random(7);
  std::uniform_int_distribution<Nanos> start(0, 100'000);
  std::uniform_int_distribution<Nanos> length(0, 20'000);
  std::vector<Slice> messy;
  for (std::uint32_t i = 0; i < 2000; ++i) {
    const Nanos s = start(random);
    messy.push_back({s, s + length(random), i, i, RecordKind::kNvtx});
  }
  std::size_t total = 0;
  for (const Lane& lane : buildLanes(messy)) {
    total += lane.slices().size();
    for (std::size_t i = 1; i < lane.slices().size(); ++i) {
      EXPECT_LE(lane.slices()[i - 1].end_ns, lane.slices()[i].start_ns);
    }
  }
  EXPECT_EQ(total, messy.size());
}

TEST(Lane, LevelOfDetailMatchesBruteForceSummaries) {
  const Lane lane(randomLaneSlices(5000, 1));
  const auto& slices = lane.slices();
  ASSERT_FALSE(lane.levels().empty());
  EXPECT_LE(lane.levels().front().buckets.size(), slices.size() / 2 + 1);
  EXPECT_EQ(lane.levels().back().buckets.size(), 1U);
  for (const LodLevel& level : lane.levels()) {
    std::map<std::int64_t, LodBucket> expected;
    for (std::uint32_t i = 0; i < slices.size(); ++i) {
      const std::int64_t bucket = (slices[i].start_ns - lane.origin()) >> level.shift;
      auto [it, inserted] =
          expected.try_emplace(bucket, LodBucket{bucket, slices[i].start_ns, slices[i].end_ns, 0, 0, slices[i]});
      LodBucket& b = it->second;
      b.max_end_ns = std::max(b.max_end_ns, slices[i].end_ns);
      b.busy_ns += slices[i].duration();
      ++b.count;
      if (slices[i].duration() > b.longest.duration()) b.longest = slices[i];
    }
    ASSERT_EQ(level.buckets.size(), expected.size()) << "shift " << level.shift;
    auto it = expected.begin();
    for (const LodBucket& bucket : level.buckets) {
      const LodBucket& want = (it++)->second;
      EXPECT_EQ(bucket.bucket, want.bucket);
      EXPECT_EQ(bucket.min_start_ns, want.min_start_ns);
      EXPECT_EQ(bucket.max_end_ns, want.max_end_ns);
      EXPECT_EQ(bucket.busy_ns, want.busy_ns);
      EXPECT_EQ(bucket.count, want.count);
      EXPECT_EQ(bucket.longest, want.longest);
    }
  }
}

// Every visible slice is covered by an item, and a frame has at most one item starting in each
// pixel column (bucket levels half a pixel wide included).
TEST(Lane, CollectCoversEveryVisibleSliceWithBoundedItems) {
  const Lane lane(randomLaneSlices(20000, 2));
  const auto& slices = lane.slices();
  const Nanos span = slices.back().end_ns - slices.front().start_ns;
  const double width = 800;
  for (const double zoom : {1.0, 0.1, 0.01, 0.0005}) {
    const FrameScale frame{slices.front().start_ns + static_cast<Nanos>(static_cast<double>(span) * 0.3),
                           static_cast<double>(span) * zoom / width, width};
    std::vector<DrawItem> items;
    lane.collect(frame, items);
    EXPECT_LE(items.size(), static_cast<std::size_t>(3 * width)) << "zoom " << zoom;
    std::size_t item = 0;
    for (std::size_t i = lane.firstEndingFrom(frame.begin_ns); i < slices.size() && slices[i].start_ns <= frame.endNs();
         ++i) {
      const double x0 = frame.xAt(slices[i].start_ns);
      const double x1 = frame.xAt(slices[i].end_ns);
      while (item < items.size() && items[item].x1 < x1 - 1e-6) ++item;
      ASSERT_LT(item, items.size()) << "slice " << i << " at zoom " << zoom;
      EXPECT_LE(items[item].x0, x0 + 1e-6);
    }
    for (std::size_t k = 1; k < items.size(); ++k) {
      EXPECT_LT(std::floor(items[k - 1].x0), std::floor(items[k].x0)) << "item " << k << " at zoom " << zoom;
    }
  }
}

TEST(Lane, ZoomedInFrameDrawsEachVisibleSliceExactly) {
  std::vector<Slice> slices;
  for (std::uint32_t i = 0; i < 100; ++i) slices.push_back({i * 1000, i * 1000 + 500, i, i, RecordKind::kKernel});
  const Lane lane(slices);
  std::vector<DrawItem> items;
  lane.collect({10'200, 10.0, 300}, items);  // 10 ns per px: [10.2 us, 13.2 us]
  ASSERT_EQ(items.size(), 4U);                // slices 10 (partly), 11, 12, 13
  EXPECT_EQ(items[0].representative->row, 10);
  EXPECT_DOUBLE_EQ(items[1].x0, 80.0);
  EXPECT_DOUBLE_EQ(items[1].x1, 130.0);
  for (const DrawItem& item : items) EXPECT_EQ(item.count, 1U);
}

TEST(Lane, HitFindsSliceUnderTimeAndNearbyInstants) {
  const Lane lane({{100, 200, 0, 0, RecordKind::kKernel}, {300, 300, 1, 1, RecordKind::kGraphBreak},
                   {400, 900, 2, 2, RecordKind::kKernel}});
  EXPECT_EQ(lane.hit(150, 0)->row, 0);
  EXPECT_EQ(lane.hit(500, 0)->row, 2);
  EXPECT_FALSE(lane.hit(250, 0).has_value());
  EXPECT_EQ(lane.hit(304, 10)->kind, RecordKind::kGraphBreak);
  EXPECT_FALSE(lane.hit(1000, 10).has_value());
  EXPECT_FALSE(Lane().hit(0, 100).has_value());
}

TEST(Viewport, ZoomKeepsTimeUnderCursorAndClamps) {
  Viewport viewport;
  viewport.setWidth(1000);
  viewport.setBounds(1'000'000, 2'000'000);
  viewport.fitAll();
  EXPECT_LE(viewport.beginNs(), 1'000'000);
  EXPECT_GE(viewport.endNs(), 2'000'000);
  const Nanos under_cursor = viewport.frame().timeAt(300);
  viewport.zoomAround(300, 0.5);
  EXPECT_NEAR(static_cast<double>(viewport.frame().timeAt(300)), static_cast<double>(under_cursor), 2.0);
  const double zoomed = viewport.nsPerPixel();
  viewport.zoomAround(300, 1e-9);
  EXPECT_DOUBLE_EQ(viewport.nsPerPixel(), Viewport::kMinNsPerPixel);
  viewport.zoomAround(300, 1e9);
  EXPECT_DOUBLE_EQ(viewport.nsPerPixel(), 4.0 * 1'000'000 / 1000);
  EXPECT_GT(viewport.nsPerPixel(), zoomed);

  viewport.showRange(1'500'000, 1'501'000, 0);
  EXPECT_DOUBLE_EQ(viewport.nsPerPixel(), 1.0);
  viewport.panPixels(100);
  EXPECT_EQ(viewport.beginNs(), 1'500'000 - 100);
  viewport.panPixels(1e12);  // far off: at least half the view still shows the timeline
  EXPECT_GE(viewport.endNs(), 1'000'000);
}

TEST(Viewport, RulerTicksFollowOneTwoFiveSeries) {
  Viewport viewport;
  viewport.setWidth(1000);
  viewport.setBounds(0, 10'000'000);
  viewport.showRange(0, 10'000'000, 0);  // 10 us per px
  const auto ticks = rulerTicks(viewport, 0, 80);
  ASSERT_GE(ticks.size(), 2U);
  EXPECT_DOUBLE_EQ(ticks[1].x - ticks[0].x, 100.0);  // 1 ms steps: the first 1-2-5 step >= 800 us
  EXPECT_EQ(ticks[0].label, "0 ns");
  EXPECT_EQ(ticks[1].label, "1 ms");
  viewport.setBounds(0, 3'000'000'000);
  viewport.showRange(2'000'000'000, 2'000'001'000, 0);  // 1 ns per px: 100 ns steps
  const auto fine = rulerTicks(viewport, 0, 80);
  ASSERT_GE(fine.size(), 2U);
  EXPECT_EQ(fine[0].label, "2.0000000 s");
  EXPECT_EQ(fine[1].label, "2.0000001 s");
}

TEST(Text, FormatsAndColoursAreStable) {
  EXPECT_EQ(formatDuration(830), "830 ns");
  EXPECT_EQ(formatDuration(1'250'000), "1.25 ms");
  EXPECT_EQ(formatDuration(2'000'000'000), "2.00 s");
  EXPECT_EQ(formatBytes(4 << 20), "4.0 MiB");
  EXPECT_EQ(sourceLocation("a.py", 3), "a.py:3");
  EXPECT_EQ(sourceLocation("a.py", -1), "a.py");
  EXPECT_EQ(baseName("/x/y/train.py"), "train.py");
  EXPECT_TRUE(containsIgnoringCase("ampere_SGEMM", "sgemm"));
  EXPECT_FALSE(containsIgnoringCase("memcpy", "kernel"));
  EXPECT_EQ(colourForName("ampere_sgemm"), colourForName("ampere_sgemm"));
  EXPECT_NE(colourForName("ampere_sgemm"), colourForName("vectorized_elementwise_kernel"));
  EXPECT_LE(colourForName("x"), 0xFFFFFFU);
}

}  // namespace
}  // namespace torchscope::gui
