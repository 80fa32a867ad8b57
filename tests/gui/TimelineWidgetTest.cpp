// The real window, offscreen, on a real store: background loading, wheel zoom, drag, click
// selection, findings, search, the item models under QAbstractItemModelTester, the screenshot, and a
// run folder of per-rank stores.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QImage>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QTextDocument>
#include <QWheelEvent>

#include <map>
#include <set>
#include <tuple>

#include "OffscreenApp.h"
#include "SampleStore.h"
#include "torchscope/gui/App.h"
#include "torchscope/gui/ItemModels.h"
#include "torchscope/gui/MainWindow.h"
#include "torchscope/gui/TimelineView.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::gui {
namespace {

QApplication& application() { return testing::offscreenApplication(); }

class TimelineWindow : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    store_path_ = testing::writeSampleStore(std::filesystem::path(TORCHSCOPE_BINARY_DIR) / "tests" / "gui" / "window");
  }
  static void TearDownTestSuite() { std::filesystem::remove(store_path_); }

  void SetUp() override {
    application();
    window_ = std::make_unique<MainWindow>();
    findings_tester_ = std::make_unique<QAbstractItemModelTester>(
        window_->findingsModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    details_tester_ = std::make_unique<QAbstractItemModelTester>(
        window_->detailsModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    stats_tester_ = std::make_unique<QAbstractItemModelTester>(window_->statsModel(),
                                                               QAbstractItemModelTester::FailureReportingMode::Fatal);
    window_->resize(1600, 900);
    window_->show();
    QSignalSpy loaded(window_.get(), &MainWindow::loaded);
    window_->open({store_path_});
    ASSERT_TRUE(loaded.wait(60'000));
    ASSERT_TRUE(loaded.front().front().toBool()) << window_->loadError();
    view_ = window_->timelineView();
  }

  [[nodiscard]] std::string detail(std::string_view name) const {
    for (const Field& field : window_->detailsModel()->fields()) {
      if (field.name == name) return field.value;
    }
    return "<missing>";
  }

  [[nodiscard]] std::uint32_t trackNamed(std::string_view title) const {
    const auto& tracks = view_->timeline()->tracks;
    for (std::uint32_t i = 0; i < tracks.size(); ++i) {
      if (tracks[i].title == title) return i;
    }
    ADD_FAILURE() << "no track " << title;
    return 0;
  }

  static std::string store_path_;
  std::unique_ptr<MainWindow> window_;
  std::unique_ptr<QAbstractItemModelTester> findings_tester_;
  std::unique_ptr<QAbstractItemModelTester> details_tester_;
  std::unique_ptr<QAbstractItemModelTester> stats_tester_;
  TimelineView* view_ = nullptr;
};
std::string TimelineWindow::store_path_;

// The pixels of the lane area (right of the labels, under the ruler) that differ from its most
// common colour, the background.
std::size_t inkInLanes(const QImage& image) {
  std::map<QRgb, std::size_t> colours;
  for (int y = TimelineView::kRulerHeight; y < image.height(); ++y) {
    for (int x = TimelineView::kGutterWidth; x < image.width(); ++x) ++colours[image.pixel(x, y)];
  }
  std::size_t total = 0;
  std::size_t background = 0;
  for (const auto& [colour, count] : colours) {
    total += count;
    background = std::max(background, count);
  }
  return total - background;
}

std::vector<std::tuple<int, int, int, std::uint32_t>> rowGeometry(const TrackLayout& layout) {
  std::vector<std::tuple<int, int, int, std::uint32_t>> rows;
  for (const LayoutRow& row : layout.rows()) rows.emplace_back(row.y, row.height, row.track, row.lanes);
  return rows;
}

// A store past the overview threshold (lowered here) is painted first from its overview, with
// every lane drawn; the full model then replaces it without moving the lanes, the rows or the
// range the user chose meanwhile.
TEST_F(TimelineWindow, ShowsAnOverviewFirstThenRefinesItInPlace) {
  LoadLimits limits;
  limits.overview_from_rows = 0;
  limits.overview_buckets_log2 = 8;
  limits.overview_exact_slices_per_lane = 16;
  QSignalSpy overview(window_.get(), &MainWindow::overviewShown);
  QSignalSpy loaded(window_.get(), &MainWindow::loaded);
  window_->open({store_path_}, limits);
  ASSERT_TRUE(overview.wait(60'000));
  ASSERT_NE(view_->timeline(), nullptr);
  ASSERT_EQ(view_->timeline()->resolution, Resolution::kOverview);
  const QImage first = view_->viewport()->grab().toImage();
  const std::size_t lane_pixels =
      static_cast<std::size_t>(first.width() - TimelineView::kGutterWidth) * (first.height() - TimelineView::kRulerHeight);
  EXPECT_GT(inkInLanes(first), lane_pixels / 50) << "the overview's first frame is blank";
  const auto rows = rowGeometry(*view_->layout());
  view_->zoomToRange(testing::kBase + testing::kStepNs, testing::kBase + 3 * testing::kStepNs);
  const Nanos begin = view_->timeAxis().beginNs();
  const Nanos end = view_->timeAxis().endNs();

  if (loaded.isEmpty()) {
    ASSERT_TRUE(loaded.wait(60'000));
  }
  ASSERT_TRUE(loaded.front().front().toBool()) << window_->loadError();
  EXPECT_EQ(overview.size(), 1);
  EXPECT_EQ(view_->timeline()->resolution, Resolution::kFull);
  EXPECT_EQ(rowGeometry(*view_->layout()), rows);
  EXPECT_EQ(view_->timeAxis().beginNs(), begin);
  EXPECT_EQ(view_->timeAxis().endNs(), end);
  EXPECT_GT(inkInLanes(view_->viewport()->grab().toImage()), lane_pixels / 50);
}

TEST_F(TimelineWindow, LoadsTheStoreAndListsFindings) {
  ASSERT_NE(view_->timeline(), nullptr);
  EXPECT_EQ(view_->timeline()->sliceCount(), 4163U);
  ASSERT_EQ(window_->findingsModel()->rowCount(), 2);
  EXPECT_EQ(window_->findingsModel()->data(window_->findingsModel()->index(0, FindingsTable::kRule), Qt::DisplayRole),
            QStringLiteral("compile/graph-break"));
  // The first view frames the GPU work, not the compile half a second before it.
  EXPECT_LE(view_->timeAxis().beginNs(), testing::kBase + 100'000);
  EXPECT_GT(view_->timeAxis().beginNs(), testing::kBase - 100'000'000);
  view_->fitAll();
  EXPECT_LE(view_->timeAxis().beginNs(), view_->timeline()->begin_ns);
  EXPECT_GE(view_->timeAxis().endNs(), view_->timeline()->end_ns);
}

TEST_F(TimelineWindow, WheelZoomsAroundTheCursor) {
  const QPointF position(TimelineView::kGutterWidth + 400, 100);
  const Nanos under_cursor = view_->timeAxis().frame().timeAt(400);
  const double before = view_->timeAxis().nsPerPixel();
  QWheelEvent wheel(position, view_->viewport()->mapToGlobal(position), QPoint(), QPoint(0, 120), Qt::NoButton,
                    Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(view_->viewport(), &wheel);
  EXPECT_NEAR(view_->timeAxis().nsPerPixel(), before * 0.8, before * 1e-6);
  EXPECT_NEAR(static_cast<double>(view_->timeAxis().frame().timeAt(400)), static_cast<double>(under_cursor),
              before);
}

TEST_F(TimelineWindow, ClickSelectsTheKernelAndShowsItsDetails) {
  const Nanos kernel_start = testing::kBase + 3 * testing::kStepNs + 500'000;
  view_->zoomToRange(kernel_start - 100'000, kernel_start + 140'000);
  const LayoutRow* row = view_->layout()->rowOfTrack(trackNamed("stream 7"));
  ASSERT_NE(row, nullptr);
  const QPoint point = view_->pointAt(kernel_start + 20'000, TrackLayout::laneTop(*row, 0) + 8);
  QSignalSpy changed(view_, &TimelineView::selectionChanged);
  QTest::mouseClick(view_->viewport(), Qt::LeftButton, Qt::NoModifier, point);
  ASSERT_EQ(changed.count(), 1);
  ASSERT_TRUE(view_->selection().has_value());
  EXPECT_EQ(view_->selection()->slice.start_ns, kernel_start);
  EXPECT_EQ(detail("store row").rfind("kernels #", 0), 0U) << detail("store row");
  EXPECT_EQ(detail("name"), "ampere_sgemm_128x64");
  EXPECT_EQ(detail("stream"), "7");
  // The selected kernel's launch is joined to it by an arrow.
  ASSERT_EQ(view_->selectionFlows().size(), 1U);
  EXPECT_EQ(view_->selectionFlows().front().from.time_ns, kernel_start - 20'000);

  QTest::mouseClick(view_->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(point.x(), 2));  // the ruler
  EXPECT_FALSE(view_->selection().has_value());
}

TEST_F(TimelineWindow, DragPansTheTimeAxis) {
  const Nanos before = view_->timeAxis().beginNs();
  const double ns_per_px = view_->timeAxis().nsPerPixel();
  const QPointF from(TimelineView::kGutterWidth + 600, 60);
  const QPointF to = from + QPointF(-200, 0);
  QMouseEvent press(QEvent::MouseButtonPress, from, view_->viewport()->mapToGlobal(from), Qt::LeftButton,
                    Qt::LeftButton, Qt::NoModifier);
  QMouseEvent move(QEvent::MouseMove, to, view_->viewport()->mapToGlobal(to), Qt::NoButton, Qt::LeftButton,
                   Qt::NoModifier);
  QMouseEvent release(QEvent::MouseButtonRelease, to, view_->viewport()->mapToGlobal(to), Qt::LeftButton,
                      Qt::NoButton, Qt::NoModifier);
  QApplication::sendEvent(view_->viewport(), &press);
  QApplication::sendEvent(view_->viewport(), &move);
  QApplication::sendEvent(view_->viewport(), &release);
  EXPECT_NEAR(static_cast<double>(view_->timeAxis().beginNs() - before), 200 * ns_per_px, 2.0);
  EXPECT_FALSE(view_->selection().has_value());  // a drag is not a click
}

TEST_F(TimelineWindow, ClickingAFindingSelectsAndZoomsToIt) {
  window_->findingsTable()->selectRow(0);  // the graph break at model.py:31
  ASSERT_TRUE(view_->selection().has_value());
  const Slice marker = view_->selection()->slice;
  EXPECT_EQ(marker.kind, RecordKind::kGraphBreak);
  EXPECT_LT(view_->timeAxis().beginNs(), marker.start_ns);
  EXPECT_GT(view_->timeAxis().endNs(), marker.start_ns);
  EXPECT_LT(view_->timeAxis().endNs() - view_->timeAxis().beginNs(),
            (view_->timeline()->end_ns - view_->timeline()->begin_ns) / 4);
  EXPECT_EQ(detail("source"), "/src/model.py:31");
  EXPECT_TRUE(window_->findingPane()->toPlainText().contains(QStringLiteral("Graph break")));
  EXPECT_FALSE(window_->source().error.empty());  // /src/model.py does not exist here

  window_->findingsTable()->selectRow(1);  // the sync at train.py:57
  ASSERT_TRUE(view_->selection().has_value());
  EXPECT_EQ(detail("store row").rfind("syncs #", 0), 0U) << detail("store row");
  EXPECT_EQ(detail("source"), "/src/train.py:57");
}

TEST_F(TimelineWindow, SearchSelectsMatchesInTurn) {
  window_->searchBox()->setText("memset");
  window_->nextMatch(true);
  ASSERT_TRUE(view_->selection().has_value());
  const Nanos first = view_->selection()->slice.start_ns;
  EXPECT_EQ(detail("store row").rfind("memset #", 0), 0U) << detail("store row");
  window_->nextMatch(true);
  EXPECT_GT(view_->selection()->slice.start_ns, first);
  window_->nextMatch(false);
  EXPECT_EQ(view_->selection()->slice.start_ns, first);
}

// Store text shown as a tooltip (rendered as rich text when it looks like HTML) reads as written.
TEST(TimelineTooltips, ShowHostileStoreTextAsWritten) {
  application();
  const std::string hostile = R"(<b>void k<float></b><img src="x.png"> &amp; <a href="file:///etc">x.py</a>)";
  const auto shownAs = [](const QVariant& tooltip) {
    QTextDocument document;
    document.setHtml(tooltip.toString());
    return document.toPlainText().toStdString();
  };
  FindingsModel findings;
  analyzer::Finding finding;
  finding.rule = "gpu/idle";
  finding.message = hostile;
  findings.setFindings({finding});
  EXPECT_EQ(shownAs(findings.data(findings.index(0, 0), Qt::ToolTipRole)), hostile);
  DetailsModel details;
  details.setFields({{"name", hostile}});
  EXPECT_EQ(shownAs(details.data(details.index(0, 1), Qt::ToolTipRole)), hostile);
  EXPECT_EQ(details.data(details.index(0, 1), Qt::DisplayRole).toString().toStdString(), hostile);
}

TEST_F(TimelineWindow, ScreenshotWritesAPictureOfTheTimeline) {
  const std::string png =
      testing::processFile(std::filesystem::path(TORCHSCOPE_BINARY_DIR) / "tests" / "gui" / "window", "shot", ".png").string();
  std::filesystem::remove(png);
  const auto result = runGui({{store_path_}, png, 1200, 700});
  ASSERT_TRUE(result.ok()) << result.error().message;
  QImage image(QString::fromStdString(png));
  ASSERT_FALSE(image.isNull());
  EXPECT_EQ(image.width(), 1200);
  const QRgb corner = image.pixel(0, 0);
  int different = 0;
  for (int y = 0; y < image.height(); y += 7) {
    for (int x = 0; x < image.width(); x += 7) different += image.pixel(x, y) != corner ? 1 : 0;
  }
  EXPECT_GT(different, 1000);

  std::filesystem::remove(png);

  const auto missing = runGui({{"/nonexistent/run.db"}, png, 1200, 700});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

TEST_F(TimelineWindow, ARunFolderOpensItsRanksSideBySide) {
  const auto run = testing::processFile(std::filesystem::path(TORCHSCOPE_BINARY_DIR) / "tests" / "gui" / "window", "run", "");
  std::filesystem::remove_all(run);
  std::filesystem::create_directories(run);
  for (const char* rank : {"run.rank1.101.db", "run.rank0.100.db"}) std::filesystem::copy_file(store_path_, run / rank);
  const std::string png = (run / "shot.png").string();
  ASSERT_TRUE(runGui({{run.string()}, png, 1200, 700}).ok());
  EXPECT_FALSE(QImage(QString::fromStdString(png)).isNull());

  QSignalSpy loaded(window_.get(), &MainWindow::loaded);
  auto stores = store::expandRunFolders({run.string()});
  ASSERT_TRUE(stores.ok()) << stores.error().message;
  window_->open(*stores);
  ASSERT_TRUE(loaded.wait(60'000));
  const Timeline& timeline = *window_->timelineView()->timeline();
  ASSERT_EQ(timeline.stores.size(), 2U);
  EXPECT_EQ(timeline.sliceCount(), 2 * 4163U);
  std::set<std::uint32_t> stores_with_gpu_tracks;
  for (const Track& track : timeline.tracks) {
    if (track.gpu()) stores_with_gpu_tracks.insert(track.store);
  }
  EXPECT_EQ(stores_with_gpu_tracks.size(), 2U);

  std::filesystem::remove(run / "run.rank0.100.db");
  std::filesystem::remove(run / "run.rank1.101.db");
  const auto empty = runGui({{run.string()}, png, 1200, 700});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, ErrorCode::kNotFound);
  std::filesystem::remove_all(run);
}

}  // namespace
}  // namespace torchscope::gui
