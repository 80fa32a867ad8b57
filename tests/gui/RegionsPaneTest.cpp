// The "Compiled regions" tab: the region table's cells without Qt, then the real window offscreen on the fixture
// store of a compiled job (tests/analyzer/regions), its model checked by QAbstractItemModelTester.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>

#include "OffscreenApp.h"
#include "torchscope/gui/ItemModels.h"
#include "torchscope/gui/MainWindow.h"
#include "torchscope/gui/RegionsPanel.h"
#include "torchscope/testing/Paths.h"
#include "torchscope/testing/StoreFixtures.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::gui {
namespace {

using torchscope::testing::TempDir;

std::string compiledJobStore(const TempDir& dir) {
  const std::string store = dir.file("regions_compiled.db");
  const auto fixture = torchscope::testing::sourcePath("tests/analyzer/regions/regions_compiled.json").string();
  EXPECT_EQ(torchscope::testing::buildStoreFromFile(fixture, store), "");
  return store;
}

TEST(RegionsPanel, OneRowPerRegionWithItsLinesTimesAndCudaGraphs) {
  TempDir dir;
  RegionsPanel panel;
  panel.load(compiledJobStore(dir));
  ASSERT_EQ(panel.error(), "");
  ASSERT_EQ(panel.rows(), 3u);
  EXPECT_EQ(panel.cell(0, RegionsPanel::kRegion), "Block.forward");
  EXPECT_EQ(panel.cell(0, RegionsPanel::kCompiledAt), "train.py:30");
  EXPECT_EQ(panel.cell(0, RegionsPanel::kCalledAt), "train.py:36");
  EXPECT_EQ(panel.cell(0, RegionsPanel::kCompile), "4.90 s (Dynamo 1.64 s, AOT 720.00 ms, Inductor 2.54 s)");
  EXPECT_EQ(panel.cell(0, RegionsPanel::kRecompiles), "1 (dynamic-shape 1)");
  EXPECT_EQ(panel.cell(0, RegionsPanel::kCalls), "10 (1 compiling)");
  EXPECT_EQ(panel.cell(0, RegionsPanel::kWallPerCall), "10.00 ms");
  EXPECT_EQ(panel.cell(0, RegionsPanel::kStepShare), "10.0 %");
  EXPECT_EQ(panel.cell(1, RegionsPanel::kCudaGraphs), "skipped: mutated inputs (1 instances)");
  EXPECT_EQ(panel.cell(2, RegionsPanel::kCalls), "not timed");
  EXPECT_EQ(panel.cell(2, RegionsPanel::kEager), "no graph: Dynamo skipped every frame, all of it ran eagerly");
  EXPECT_EQ(panel.cell(0, RegionsPanel::kSpeedup), "");  // no eager run to compare with
  EXPECT_EQ(panel.cell(99, RegionsPanel::kRegion), "");
  EXPECT_NE(panel.summary().find("3 compiled regions"), std::string::npos) << panel.summary();
}

// The pane says what advise --regions says: whether this run repaid the compile time, and CPU per call beside the
// wall time of the calls it was read on.
TEST(RegionsPanel, PayoffAndCpuPerCallReadAsTheRegionTableSaysThem) {
  analyzer::Region repaid;
  repaid.name = "forward";
  repaid.calls = 300;
  repaid.eager_wall_per_call_s = 0.002;
  repaid.payoff_calls = 245;
  repaid.cpu_calls = 38;
  repaid.cpu_per_call_s = 0.000832;
  repaid.cpu_wall_per_call_s = 0.000906;
  analyzer::Region short_run = repaid;
  short_run.calls = 40;
  analyzer::Region slower = repaid;
  slower.payoff_calls = -1;
  analyzer::RegionTable table;
  table.regions = {repaid, short_run, slower};
  RegionsPanel panel;
  panel.setTable(table);
  EXPECT_EQ(panel.cell(0, RegionsPanel::kPayoff), analyzer::regionPayoffText(repaid));
  EXPECT_NE(panel.cell(0, RegionsPanel::kPayoff).find("paid off after 245 calls"), std::string::npos);
  EXPECT_NE(panel.cell(1, RegionsPanel::kPayoff).find("would pay off after 245 calls; this run made 40"),
            std::string::npos)
      << panel.cell(1, RegionsPanel::kPayoff);
  EXPECT_EQ(panel.cell(2, RegionsPanel::kPayoff), "never");
  EXPECT_EQ(panel.cell(0, RegionsPanel::kCpuPerCall), "832.0 us (of 906.0 us wall, 38 calls read)");
}

TEST(RegionsPanel, AFileThatIsNoStoreGivesNoRowsAndSaysWhy) {
  RegionsPanel panel;
  panel.load("/nonexistent/run.db");
  EXPECT_EQ(panel.rows(), 0u);
  EXPECT_FALSE(panel.error().empty());
  EXPECT_NE(panel.summary().find("No region table"), std::string::npos);
}

TEST(RegionsPane, TheTabReadsTheTableWhenFirstShown) {
  TempDir dir;
  std::unique_ptr<MainWindow> window;
  testing::openAnalysedWindow(window, {compiledJobStore(dir)});
  QAbstractItemModelTester tester(window->regionsModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  EXPECT_EQ(window->regionsModel()->rowCount(), 0);  // not read before the tab is shown
  window->showRegions();
  ASSERT_EQ(window->regionsModel()->rowCount(), 3);
  EXPECT_EQ(window->regionsModel()->columnCount(), RegionsPanel::kColumnCount);
  const auto* model = window->regionsModel();
  EXPECT_EQ(model->data(model->index(0, RegionsPanel::kRegion), Qt::DisplayRole).toString(), "Block.forward");
  EXPECT_EQ(model->headerData(RegionsPanel::kCudaGraphs, Qt::Horizontal, Qt::DisplayRole).toString(), "CUDA graphs");
  window->open({dir.file("regions_compiled.db")});  // opening again forgets the table until shown again
  EXPECT_EQ(window->regionsModel()->rowCount(), 0);
}

}  // namespace
}  // namespace torchscope::gui
