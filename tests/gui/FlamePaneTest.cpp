// The "Flame graph" tab: FlamePanel's boxes and tooltips without Qt, then the real window offscreen on a store with
// sampled stacks (tests/analyzer/SampledStore.h): the boxes drawn in their colours, the tooltip, and a click on a
// frame of the user's code showing its line in the source pane. TORCHSCOPE_GUI_SHOTS=<folder> keeps the picture.
#include <gtest/gtest.h>

#include <QDir>
#include <QHelpEvent>
#include <QPlainTextEdit>
#include <QTest>
#include <QToolTip>

#include <filesystem>
#include <fstream>

#include "OffscreenApp.h"
#include "SampledStore.h"
#include "torchscope/gui/FlamePanel.h"
#include "torchscope/gui/FlameView.h"
#include "torchscope/gui/MainWindow.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::gui {
namespace {

using torchscope::testing::TempDir;

int boxNamed(const FlamePanel& panel, const std::string& function) {
  for (std::size_t i = 0; i < panel.boxes().size(); ++i) {
    if (panel.boxes()[i].node->function == function) return static_cast<int>(i);
  }
  return -1;
}

TEST(FlamePanel, BoxesNestInTheirParentsAndSayWhatTheyAre) {
  TempDir dir;
  FlamePanel panel;
  panel.load(analyzer::testing::writeSampledStore(dir.file("sampled.db")));
  ASSERT_EQ(panel.error(), "");
  ASSERT_EQ(panel.boxes().size(), 9u);  // the root and 8 frames; Adam's 1 ms inner loop is pruned
  EXPECT_EQ(panel.depth(), 6);          // root, <module>, train_step, _call_impl, forward, linear
  EXPECT_DOUBLE_EQ(panel.boxes()[0].begin, 0);
  EXPECT_DOUBLE_EQ(panel.boxes()[0].end, 1);
  for (std::size_t i = 1; i < panel.boxes().size(); ++i) {
    const FlameBox& box = panel.boxes()[i];
    const FlameBox& parent = panel.boxes()[static_cast<std::size_t>(box.parent)];
    EXPECT_EQ(box.depth, parent.depth + 1);
    EXPECT_GE(box.begin, parent.begin - 1e-12);
    EXPECT_LE(box.end, parent.end + 1e-12);
  }
  const int forward = boxNamed(panel, "forward");
  ASSERT_GT(forward, 0);
  EXPECT_EQ(panel.tooltip(forward),
            "forward\n/work/proj/model.py:12\n200.0 ms total (49.4 % of the sampled time), 40.0 ms self, 20 "
            "sample(s)\nyour code: click to show the line");
  const FlameBox& box = panel.boxes()[static_cast<std::size_t>(forward)];
  EXPECT_EQ(panel.boxAt((box.begin + box.end) / 2, box.depth), forward);
  EXPECT_EQ(panel.boxAt((box.begin + box.end) / 2, 40), -1);
  EXPECT_NE(panel.summary().find("over the 4 steady-state step(s)"), std::string::npos) << panel.summary();
}

TEST(FlamePanel, AStoreWithoutSamplesOrNoStoreSaysWhy) {
  FlamePanel panel;
  panel.load("/nonexistent/run.db");
  EXPECT_TRUE(panel.boxes().empty());
  EXPECT_FALSE(panel.error().empty());
  EXPECT_NE(panel.summary().find("No flame graph"), std::string::npos);
  TempDir dir;
  const std::string store = dir.file("plain.db");
  auto writer = store::Writer::open(store);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->close(1).ok());
  panel.load(store);
  EXPECT_EQ(panel.error(), "");
  EXPECT_NE(panel.summary().find("no stack samples"), std::string::npos) << panel.summary();
}

TEST(FlamePane, TheTabDrawsTheTreeShowsTooltipsAndOpensTheUsersLine) {
  TempDir dir;
  const std::string project = dir.file("proj");
  std::filesystem::create_directories(project);
  {
    std::ofstream model(project + "/model.py");
    for (int line = 1; line <= 20; ++line) model << (line == 12 ? "    return self.linear(x)\n" : "# line\n");
  }
  const std::string store = analyzer::testing::writeSampledStore(dir.file("sampled.db"), project);
  std::unique_ptr<MainWindow> window;
  testing::openAnalysedWindow(window, {store});
  FlameView& view = *window->flameView();
  EXPECT_TRUE(view.panel().boxes().empty());  // not read before the tab is shown
  window->showFlameGraph();
  ASSERT_EQ(view.panel().boxes().size(), 9u);
  QCoreApplication::processEvents();
  ASSERT_GT(view.width(), 300);

  const QImage shot = view.grab().toImage();
  if (const QByteArray folder = qgetenv("TORCHSCOPE_GUI_SHOTS"); !folder.isEmpty()) {
    shot.save(QDir(QString::fromUtf8(folder)).filePath(QStringLiteral("flame_graph.png")));
  }
  const int forward = boxNamed(view.panel(), "forward");
  const int linear = boxNamed(view.panel(), "linear");
  const QPoint forward_at = view.boxRect(forward).center().toPoint();
  const QPoint linear_at = view.boxRect(linear).center().toPoint();
  // Left of the labels, inside the border.
  const QColor user = shot.pixelColor(view.boxRect(forward).topLeft().toPoint() + QPoint(1, 8));
  const QColor library = shot.pixelColor(view.boxRect(linear).topLeft().toPoint() + QPoint(1, 8));
  EXPECT_GT(user.blue(), user.red()) << "the user's frames are blue";
  EXPECT_GT(library.red(), library.blue()) << "torch's frames are orange";
  EXPECT_EQ(view.boxAt(forward_at), forward);

  QHelpEvent help(QEvent::ToolTip, forward_at, view.mapToGlobal(forward_at));
  QCoreApplication::sendEvent(&view, &help);
  EXPECT_TRUE(QToolTip::text().startsWith(QStringLiteral("forward\n"))) << QToolTip::text().toStdString();

  QTest::mouseClick(&view, Qt::LeftButton, Qt::NoModifier, linear_at);  // torch's frame: nothing to open
  EXPECT_TRUE(window->source().path.empty());
  QTest::mouseClick(&view, Qt::LeftButton, Qt::NoModifier, forward_at);
  EXPECT_EQ(window->source().path, project + "/model.py");
  EXPECT_EQ(window->source().line, 12);
  EXPECT_NE(window->sourcePane()->toPlainText().indexOf(QStringLiteral("return self.linear(x)")), -1);
}

}  // namespace
}  // namespace torchscope::gui
