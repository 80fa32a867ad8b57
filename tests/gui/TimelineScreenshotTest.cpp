// Real Kineto traces (tests/corpus/kineto) imported and rendered as the window first shows them,
// checked by pixel statistics per lane region rather than exact pixels (fonts and styles differ
// between machines): a blank, one-colour or misplaced render fails, and so does a track whose
// slices are in view but not drawn. Also what the first view frames and that findings arrive.
#include <gtest/gtest.h>

#include <QImage>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "OffscreenApp.h"
#include "SampleStore.h"
#include "torchscope/gui/ItemModels.h"
#include "torchscope/gui/MainWindow.h"
#include "torchscope/gui/TimelineView.h"
#include "torchscope/interop/Import.h"

namespace torchscope::gui {
namespace {

// A track's slices that overlap [begin_ns, end_ns), over all its lanes.
bool hasSlicesIn(const Track& track, Nanos begin_ns, Nanos end_ns) {
  return std::any_of(track.lanes.begin(), track.lanes.end(), [&](const Lane& lane) {
    const std::size_t first = lane.firstEndingFrom(begin_ns);
    return first < lane.slices().size() && lane.slices()[first].start_ns < end_ns;
  });
}

struct RowPixels {
  std::size_t band = 0;       // pixels of the row's lanes in the time area
  std::size_t ink = 0;        // of them, pixels that differ from the row's background in that column
  std::size_t label_ink = 0;  // dark pixels of the row's label in the gutter
  std::set<QRgb> colours;     // colours of the ink
};

class TimelineScreenshot : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    testing::offscreenApplication();
    const auto dir = std::filesystem::path(TORCHSCOPE_BINARY_DIR) / "tests" / "gui" / "screenshot";
    std::filesystem::create_directories(dir);
    store_path_ = testing::processFile(dir, GetParam(), ".db").string();
    const std::string trace = std::string(TORCHSCOPE_CORPUS_DIR) + "/kineto/" + GetParam() + ".json.gz";
    auto imported = interop::importToStore({trace}, store_path_);
    ASSERT_TRUE(imported.ok()) << imported.error().message;
    testing::openAnalysedWindow(window_, {store_path_});
  }
  void TearDown() override {
    window_.reset();
    std::filesystem::remove(store_path_);
  }

  // The row's pixels in the viewport picture: the 2-pixel padding above its first lane holds only
  // its background and the ruler's grid lines, which makes the per-column reference.
  [[nodiscard]] RowPixels measure(const QImage& shot, const LayoutRow& row, int time_left) const {
    const TimelineView& view = *window_->timelineView();
    RowPixels pixels;
    const int padding_y = view.pointAt(0, row.y + 1).y();
    for (std::uint32_t lane = 0; lane < row.lanes; ++lane) {
      const int top = view.pointAt(0, TrackLayout::laneTop(row, lane)).y();
      for (int y = top + 1; y < top + TrackLayout::kLaneHeight - 1 && y < shot.height(); ++y) {
        for (int x = time_left; x < shot.width(); ++x) {
          ++pixels.band;
          if (shot.pixel(x, y) == shot.pixel(x, padding_y)) continue;
          ++pixels.ink;
          pixels.colours.insert(shot.pixel(x, y));
        }
        for (int x = 0; x < time_left - 1; ++x) pixels.label_ink += qGray(shot.pixel(x, y)) < 128 ? 1 : 0;
      }
    }
    return pixels;
  }

  std::string store_path_;
  std::unique_ptr<MainWindow> window_;
};

TEST_P(TimelineScreenshot, EveryTrackWithSlicesInTheFirstViewIsDrawnAndFindingsArrive) {
  EXPECT_GT(window_->findingsModel()->rowCount(), 0);
  const TimelineView& view = *window_->timelineView();
  const Timeline& timeline = *view.timeline();
  const TrackLayout& layout = *view.layout();
  const QImage shot = view.viewport()->grab().toImage();
  const Nanos begin = view.timeAxis().beginNs();
  const Nanos end = view.timeAxis().endNs();
  const int time_left = view.pointAt(begin, 0).x();
  ASSERT_GT(time_left, 0);
  ASSERT_LT(view.pointAt(0, layout.height()).y(), shot.height()) << "every row fits in the picture";

  std::set<QRgb> colours;
  std::size_t tracks_drawn = 0;
  for (const LayoutRow& row : layout.rows()) {
    if (row.track < 0) continue;
    const Track& track = timeline.tracks[static_cast<std::size_t>(row.track)];
    const RowPixels pixels = measure(shot, row, time_left);
    EXPECT_GT(pixels.label_ink, 20U) << "no label drawn for " << row.label;
    if (!hasSlicesIn(track, begin, end)) {
      // Nothing in view: only a GPU stream may show ink (its device's idle gaps).
      if (!track.gpu()) {
        EXPECT_EQ(pixels.ink, 0U) << row.label;
      }
      continue;
    }
    EXPECT_GT(pixels.ink, 0U) << row.label << " has slices in view but none drawn";
    // Less than the whole band: the slices are drawn where they are, not smeared over the lane.
    EXPECT_LT(pixels.ink, pixels.band) << row.label;
    tracks_drawn += pixels.ink > 0 ? 1 : 0;
    colours.insert(pixels.colours.begin(), pixels.colours.end());
  }
  EXPECT_GE(tracks_drawn, 3U);
  EXPECT_GE(colours.size(), 8U) << "slices are coloured by name";
}

// AlexNet: a warm-up, about 10 s of host work with the GPU idle, then the measured iterations.
// The first view leaves that idle stretch out instead of showing the GPU work as hairlines at an edge.
TEST_P(TimelineScreenshot, FirstViewLeavesOutALongIdleStretchOfTheGpu) {
  const TimelineView& view = *window_->timelineView();
  const Timeline& timeline = *view.timeline();
  Nanos longest_idle = 0;
  for (const GpuGap& gap : timeline.gaps) longest_idle = std::max(longest_idle, gap.gap.end_ns - gap.gap.start_ns);
  const Nanos begin = view.timeAxis().beginNs();
  const Nanos end = view.timeAxis().endNs();
  std::uint64_t gpu_operations = 0;
  for (const NameTotal& total : timeline.stats.totals(begin, end)) {
    if (total.kind == StatKind::kKernel || total.kind == StatKind::kMemcpy) gpu_operations += total.count;
  }
  EXPECT_GE(gpu_operations, 10U);
  if (GetParam() == "critical_path_alexnet") {
    EXPECT_LT(end - begin, longest_idle) << timeline.focus.what;
    EXPECT_NE(timeline.focus.what.find("idle GPU left out"), std::string::npos) << timeline.focus.what;
  }
}

INSTANTIATE_TEST_SUITE_P(Kineto, TimelineScreenshot,
                         ::testing::Values("critical_path_alexnet", "timeline_analysis_sampled_rank-0"),
                         [](const ::testing::TestParamInfo<std::string>& trace) {
                           std::string name = trace.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace torchscope::gui
