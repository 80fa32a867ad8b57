// The overview a large store is shown with first: a faithful coarse view of the full model (same
// tracks, lanes, extent and first view; at a zoom its buckets can show, the same pixels covered and
// the same slices counted), handed over once before the full model is returned.
// Small lane limits make the sample store "large" here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "SampleStore.h"
#include "torchscope/gui/Timeline.h"

namespace torchscope::gui {
namespace {

struct Pixels {
  std::set<int> covered;
  std::uint64_t slices = 0;  // folded into the items drawn
};

// The pixel columns the lane's items touch in the frame, and how many slices they stand for.
Pixels drawn(const Lane& lane, const FrameScale& frame) {
  std::vector<DrawItem> items;
  lane.collect(frame, items);
  Pixels pixels;
  for (const DrawItem& item : items) {
    const int first = static_cast<int>(std::floor(item.x0));
    const int last = std::max(first, static_cast<int>(std::ceil(item.x1)) - 1);
    for (int x = std::max(0, first); x <= std::min(last, static_cast<int>(frame.width_px) - 1); ++x) {
      pixels.covered.insert(x);
    }
    pixels.slices += item.count;
  }
  return pixels;
}

class TimelineOverview : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto dir = std::filesystem::path(TORCHSCOPE_BINARY_DIR) / "tests" / "gui" / "overview_test";
    path_ = testing::writeSampleStore(dir);
    LoadLimits limits;
    limits.overview_from_rows = 0;
    limits.overview_buckets_log2 = 8;
    limits.overview_exact_slices_per_lane = 16;
    auto loaded = loadTimeline({path_}, {}, limits, [](std::shared_ptr<const Timeline> overview) {
      ++overviews_;
      overview_ = std::move(overview);
    });
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    full_ = loaded.value();
  }
  static void TearDownTestSuite() {
    overview_.reset();
    full_.reset();
    std::filesystem::remove(path_);
  }

  static std::string path_;
  static int overviews_;
  static std::shared_ptr<const Timeline> overview_;
  static std::shared_ptr<const Timeline> full_;
};
std::string TimelineOverview::path_;
int TimelineOverview::overviews_ = 0;
std::shared_ptr<const Timeline> TimelineOverview::overview_;
std::shared_ptr<const Timeline> TimelineOverview::full_;

TEST_F(TimelineOverview, IsHandedOverOnceAndIsCoarserThanTheFullModel) {
  ASSERT_EQ(overviews_, 1);
  ASSERT_NE(overview_, nullptr);
  EXPECT_EQ(overview_->resolution, Resolution::kOverview);
  EXPECT_EQ(full_->resolution, Resolution::kFull);
  EXPECT_GT(overview_->detail_shift, full_->detail_shift);
  // Stream 7 (2000 kernels), the CUDA API calls (2000) and the CPU ops of thread 42 (20 a lane)
  // pass the overview's 16 exact slices: their lanes are summarised there, exact in the full model.
  std::size_t coarser = 0;
  for (std::size_t t = 0; t < full_->tracks.size(); ++t) {
    for (std::size_t l = 0; l < full_->tracks[t].lanes.size() && l < overview_->tracks[t].lanes.size(); ++l) {
      if (!overview_->tracks[t].lanes[l].exact() && full_->tracks[t].lanes[l].exact()) ++coarser;
    }
  }
  EXPECT_GE(coarser, 4U);
}

TEST_F(TimelineOverview, HasTheFullModelsTracksLanesAndTimeAxis) {
  ASSERT_EQ(overview_->tracks.size(), full_->tracks.size());
  for (std::size_t t = 0; t < full_->tracks.size(); ++t) {
    const Track& coarse = overview_->tracks[t];
    const Track& fine = full_->tracks[t];
    EXPECT_EQ(coarse.group, fine.group);
    EXPECT_EQ(coarse.title, fine.title);
    EXPECT_EQ(coarse.kind, fine.kind);
    ASSERT_EQ(coarse.lanes.size(), fine.lanes.size()) << fine.title;
    for (std::size_t l = 0; l < fine.lanes.size(); ++l) {
      EXPECT_EQ(coarse.lanes[l].count(), fine.lanes[l].count()) << fine.title << " lane " << l;
      EXPECT_EQ(coarse.lanes[l].endNs(), fine.lanes[l].endNs()) << fine.title << " lane " << l;
    }
    EXPECT_EQ(coarse.counter.count(), fine.counter.count()) << fine.title;
  }
  EXPECT_EQ(overview_->begin_ns, full_->begin_ns);
  EXPECT_EQ(overview_->end_ns, full_->end_ns);
  EXPECT_EQ(overview_->focus.begin_ns, full_->focus.begin_ns);
  EXPECT_EQ(overview_->focus.end_ns, full_->focus.end_ns);
  EXPECT_EQ(overview_->focus.what, full_->focus.what);
  EXPECT_EQ(overview_->sliceCount(), full_->sliceCount());
}

TEST_F(TimelineOverview, CoversTheSamePixelsAsTheFullModelWhereItsBucketsFitAPixel) {
  // The whole run 160 px wide: 1.25 ms a pixel, coarser than the overview's finest bucket.
  const double width = 160;
  const FrameScale frame{full_->begin_ns, static_cast<double>(full_->end_ns - full_->begin_ns) / width, width};
  ASSERT_GE(frame.ns_per_px, std::ldexp(1.0, overview_->detail_shift));
  std::size_t lanes_drawn = 0;
  for (std::size_t t = 0; t < full_->tracks.size(); ++t) {
    for (std::size_t l = 0; l < full_->tracks[t].lanes.size(); ++l) {
      const Lane& coarse = overview_->tracks[t].lanes[l];
      EXPECT_FALSE(coarse.needsDetail(frame)) << full_->tracks[t].title;
      const Pixels want = drawn(full_->tracks[t].lanes[l], frame);
      const Pixels got = drawn(coarse, frame);
      EXPECT_EQ(got.covered, want.covered) << full_->tracks[t].title << " lane " << l;
      EXPECT_EQ(got.slices, want.slices) << full_->tracks[t].title << " lane " << l;
      if (!want.covered.empty()) ++lanes_drawn;
    }
  }
  EXPECT_GE(lanes_drawn, 6U);
}

// The overview reads no names: no statistics and no gaps (their causes need the launches) until the
// full model arrives; it still frames what the full model frames (checked above).
TEST_F(TimelineOverview, WaitsForTheFullModelForStatisticsAndGaps) {
  EXPECT_TRUE(overview_->stats.totals(full_->begin_ns, full_->end_ns).empty());
  EXPECT_FALSE(full_->stats.totals(full_->begin_ns, full_->end_ns).empty());
  EXPECT_TRUE(overview_->gaps.empty());
  EXPECT_FALSE(full_->gaps.empty());
}

TEST_F(TimelineOverview, IsNotBuiltForAStoreBelowTheThreshold) {
  int calls = 0;
  auto loaded = loadTimeline({path_}, {}, {}, [&](std::shared_ptr<const Timeline>) { ++calls; });
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(calls, 0);  // a few thousand rows: read once
  EXPECT_EQ(loaded.value()->resolution, Resolution::kFull);
}

}  // namespace
}  // namespace torchscope::gui
