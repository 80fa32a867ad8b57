// Memory in the window, on a real store: a CPU training job that keeps every step's output in a list
// (tests/collector/scripts/leak_outputs_list.py) run under `torchscope run`, then opened offscreen.
// Its host RSS counter lane holds the store's samples and is drawn (pixel statistics of its band,
// not exact pixels), and the memory/growth finding found on open zooms to the steps it names.
#include <gtest/gtest.h>

#include <QImage>
#include <QTableView>

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "JobScripts.h"
#include "OffscreenApp.h"
#include "torchscope/gui/ItemModels.h"
#include "torchscope/gui/MainWindow.h"
#include "torchscope/gui/TimelineView.h"
#include "torchscope/store/Reader.h"
#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::gui {
namespace {

class MemoryLanes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<torchscope::testing::TempDir>();
    store_path_ = dir_->file("run.db");
    // A step end's RSS is read at most once a sampler period: a 1 ms period keeps a row at each of these few-ms steps.
    torchscope::testing::ProgramOptions options;
    options.env["TORCHSCOPE_MEMORY_SAMPLE_MS"] = "1";
    const auto job = torchscope::testing::runUnderTorchscope(
        store_path_, {TORCHSCOPE_PYTHON, torchscope::testing::scriptPath("leak_outputs_list.py").string()}, options);
    ASSERT_EQ(job.exit_code, 0) << job.err;
  }
  static void TearDownTestSuite() { dir_.reset(); }

  void SetUp() override {
    testing::openAnalysedWindow(window_, {store_path_});
    ASSERT_FALSE(HasFatalFailure());
    view_ = window_->timelineView();
    for (std::uint32_t t = 0; t < view_->timeline()->tracks.size(); ++t) {
      if (view_->timeline()->tracks[t].series == "host.rss") rss_track_ = t;
    }
    ASSERT_GE(rss_track_, 0) << "no host RSS counter track";
  }

  [[nodiscard]] const Track& rss() const { return view_->timeline()->tracks[static_cast<std::size_t>(rss_track_)]; }

  // Pixels of the counter's band that differ from its row's padding (background and grid) in their column.
  [[nodiscard]] std::pair<std::size_t, std::size_t> bandInk(const QImage& shot) const {
    const LayoutRow* row = view_->layout()->rowOfTrack(static_cast<std::uint32_t>(rss_track_));
    EXPECT_NE(row, nullptr);
    if (row == nullptr) return {0, 0};
    const int time_left = view_->pointAt(view_->timeAxis().beginNs(), 0).x();
    const int padding_y = view_->pointAt(0, row->y + 1).y();
    const int top = view_->pointAt(0, TrackLayout::laneTop(*row, 0)).y();
    std::size_t band = 0;
    std::size_t ink = 0;
    for (int y = top + 1; y < top + TrackLayout::kCounterHeight - 1 && y < shot.height(); ++y) {
      for (int x = time_left; x < shot.width(); ++x) {
        ++band;
        ink += shot.pixel(x, y) != shot.pixel(x, padding_y) ? 1 : 0;
      }
    }
    return {band, ink};
  }

  static std::unique_ptr<torchscope::testing::TempDir> dir_;
  static std::string store_path_;
  std::unique_ptr<MainWindow> window_;
  TimelineView* view_ = nullptr;
  int rss_track_ = -1;
};
std::unique_ptr<torchscope::testing::TempDir> MemoryLanes::dir_;
std::string MemoryLanes::store_path_;

TEST_F(MemoryLanes, TheHostRssLaneHoldsTheStoresSamplesAndIsDrawn) {
  auto reader = store::Reader::open(store_path_);
  ASSERT_TRUE(reader.ok());
  std::int64_t count = 0;
  std::int64_t low = 0;
  std::int64_t high = 0;
  ASSERT_TRUE((*reader)
                  ->query("SELECT count(*), min(value), max(value) FROM memory_samples WHERE series = 'host.rss'",
                          [&](const store::Row& row) {
                            count = row.integer(0);
                            low = row.integer(1);
                            high = row.integer(2);
                          })
                  .ok());
  ASSERT_GE(count, 20) << "a sample at each of the 20 step ends, and the sampler's";
  EXPECT_EQ(rss().counter.count(), static_cast<std::size_t>(count));
  EXPECT_EQ(rss().counter.minValue(), low);
  EXPECT_EQ(rss().counter.maxValue(), high);
  EXPECT_GT(high - low, 10 << 20) << "the job keeps 1 MiB per step";

  view_->fitAll();
  const QImage shot = view_->viewport()->grab().toImage();
  const auto [band, ink] = bandInk(shot);
  // Filled under the value wherever the run has samples; empty above it (the value reaches the top only at its peak).
  EXPECT_GT(ink, band / 4);
  EXPECT_LT(ink, band);

  // Collapsed, its group's header still shows the counter.
  view_->toggleGroup(rss().group);
  EXPECT_EQ(view_->layout()->rowOfTrack(static_cast<std::uint32_t>(rss_track_)), nullptr);
  EXPECT_TRUE(view_->layout()->laneY(static_cast<std::uint32_t>(rss_track_), 0).has_value());
}

TEST_F(MemoryLanes, ClickingTheGrowthFindingZoomsToTheStepsWhereItGrows) {
  const FindingsTable& findings = window_->findingsModel()->table();
  int growth = -1;
  for (std::size_t row = 0; row < findings.rows(); ++row) {
    if (findings.finding(row).rule == "memory/growth") growth = static_cast<int>(row);
  }
  ASSERT_GE(growth, 0) << "the leak is found";
  const nlohmann::json& evidence = findings.finding(static_cast<std::size_t>(growth)).evidence;
  const auto first_step = evidence.at("first_step").get<std::int64_t>();
  const auto last_step = evidence.at("step").get<std::int64_t>();
  Nanos from = std::numeric_limits<Nanos>::max();
  Nanos to = std::numeric_limits<Nanos>::min();
  for (const store::Step& step : view_->timeline()->records.steps) {
    if (step.index < first_step || step.index > last_step) continue;
    from = std::min(from, step.start_ns);
    to = std::max(to, step.end_ns);
  }
  ASSERT_LT(from, to);

  view_->fitAll();
  window_->findingsTable()->selectRow(growth);
  const Nanos begin = view_->timeAxis().beginNs();
  const Nanos end = view_->timeAxis().endNs();
  EXPECT_LE(begin, from);
  EXPECT_GE(end, to);
  EXPECT_LT(end - begin, 2 * (to - from)) << "zoomed to the steps, not the whole run";
  EXPECT_LT(end - begin, view_->timeline()->end_ns - view_->timeline()->begin_ns);
  // The host RSS lane is in view.
  const LayoutRow* row = view_->layout()->rowOfTrack(static_cast<std::uint32_t>(rss_track_));
  ASSERT_NE(row, nullptr);
  const int y = view_->pointAt(begin, row->y).y();
  EXPECT_GE(y, TimelineView::kRulerHeight);
  EXPECT_LT(y + row->height, view_->viewport()->height());
}

}  // namespace
}  // namespace torchscope::gui
