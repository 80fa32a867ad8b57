// The timeline model on a store with values at the int64 edges in every table (times at INT64_MIN and INT64_MAX,
// spans that end before they start, counters and doubles at the edges), loaded beside an ordinary store whose
// wall-clock anchor is far from it: it loads exact and summarised, and every lane, counter, statistic, detail,
// flow and the ruler answer at every zoom and pan, within bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <vector>

#include "SampleStore.h"
#include "torchscope/gui/DetailSource.h"
#include "torchscope/gui/PanelFields.h"
#include "torchscope/gui/FindingPanel.h"
#include "torchscope/gui/Layout.h"
#include "torchscope/gui/StatsTable.h"
#include "torchscope/gui/Viewport.h"
#include "torchscope/testing/ExtremeStore.h"

namespace torchscope::gui {
namespace {

constexpr double kWidthPx = 1600;
constexpr double kTickSpacingPx = 80;

// Everything a frame of the view asks the model, for the viewport as it stands.
void exerciseFrame(const std::shared_ptr<const Timeline>& timeline, const Viewport& viewport, DetailSource& source) {
  const FrameScale frame = viewport.frame();
  std::vector<DrawItem> items;
  std::vector<CounterSpan> spans;
  for (const Track& track : timeline->tracks) {
    for (const Lane& lane : track.lanes) {
      items.clear();
      lane.collect(frame, items);
      for (const DrawItem& item : items) {
        EXPECT_FALSE(std::isnan(item.x0));
        EXPECT_LE(item.x0, item.x1);
      }
      for (const double x : {0.0, kWidthPx / 2, kWidthPx}) (void)lane.hit(frame.timeAt(x), std::numeric_limits<Nanos>::max());
    }
    spans.clear();
    track.counter.collect(frame, spans);
    for (const double x : {0.0, kWidthPx / 2, kWidthPx}) (void)track.counter.valueAt(frame.timeAt(x));
  }
  const TrackLayout layout(*timeline);
  for (const LayoutRow& row : layout.rows()) {
    for (const double x : {0.0, kWidthPx / 2, kWidthPx}) {
      if (auto hit = hitTest(*timeline, layout, viewport, nullptr, x, TrackLayout::laneTop(row, 0) + 2)) {
        (void)describe(*timeline, *hit);
        EXPECT_TRUE(source.describe(*hit).ok());
        EXPECT_TRUE(source.flowsOf(*hit).ok());
      }
      (void)counterAt(*timeline, layout, viewport, x, TrackLayout::laneTop(row, 0) + 2);
    }
  }
  const auto ticks = rulerTicks(viewport, timeline->begin_ns, kTickSpacingPx);
  EXPECT_LE(ticks.size(), static_cast<std::size_t>(kWidthPx / kTickSpacingPx) + 2);
  StatsTable table;
  table.setRange(*timeline, viewport.beginNs(), viewport.endNs());
  for (std::size_t row = 0; row < table.rows(); ++row) {
    for (int column = 0; column < StatsTable::kColumnCount; ++column) (void)table.cell(row, column);
  }
  EXPECT_TRUE(source.fetch(viewport.beginNs(), viewport.endNs()).ok());
}

TEST(ExtremeValues, TheTimelineLoadsAndAnswersAtEveryZoomAndPan) {
  const auto dir = std::filesystem::path(TORCHSCOPE_BINARY_DIR) / "tests" / "gui" / "extreme_test";
  std::filesystem::create_directories(dir);
  const std::string extreme = testing::processFile(dir, "extreme", ".db").string();
  ASSERT_EQ(torchscope::testing::writeExtremeValuesStore(extreme), "");
  const std::string sample = testing::writeSampleStore(dir, 3, 10);
  LoadLimits summarised;
  summarised.exact_slices_per_lane = 4;
  summarised.summary_buckets_log2 = 8;
  for (const LoadLimits& limits : {LoadLimits{}, summarised}) {
    auto loaded = loadTimeline({extreme, sample}, {}, limits);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const std::shared_ptr<const Timeline> timeline = loaded.value();
    EXPECT_LT(timeline->begin_ns, timeline->end_ns);
    EXPECT_GT(timeline->sliceCount(), 0U);
    auto source = DetailSource::open(timeline);
    ASSERT_TRUE(source.ok()) << source.error().message;

    Viewport viewport;
    viewport.setWidth(kWidthPx);
    viewport.setBounds(timeline->begin_ns, timeline->end_ns);
    viewport.fitAll();
    exerciseFrame(timeline, viewport, **source);
    viewport.showRange(timeline->focus.begin_ns, timeline->focus.end_ns);
    exerciseFrame(timeline, viewport, **source);
    for (const double x : {0.0, kWidthPx}) {  // all the way in at both ends, then back out
      viewport.fitAll();
      for (int zoom = 0; zoom < 80; ++zoom) viewport.zoomAround(x, 0.5);
      exerciseFrame(timeline, viewport, **source);
      viewport.panPixels(x == 0 ? 1e12 : -1e12);
      exerciseFrame(timeline, viewport, **source);
      for (int zoom = 0; zoom < 80; ++zoom) viewport.zoomAround(x, 2);
      exerciseFrame(timeline, viewport, **source);
      EXPECT_LE(viewport.beginNs(), viewport.endNs());
    }

    FindingsTable findings(timeline->records.findings);
    ASSERT_GT(findings.rows(), 0U);
    for (std::size_t row = 0; row < findings.rows(); ++row) {
      for (int column = 0; column < FindingsTable::kColumnCount; ++column) (void)findings.cell(row, column);
      EXPECT_FALSE(findingText(findings.finding(row), timeline->records.fix_experiments).empty());
      (void)locateFinding(*timeline, findings.finding(row));
    }
  }
  std::filesystem::remove(extreme);
  std::filesystem::remove(sample);
}

}  // namespace
}  // namespace torchscope::gui
