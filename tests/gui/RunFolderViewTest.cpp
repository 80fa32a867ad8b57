// The run-folder view of a folder of more ranks than kRunFolderViewAboveRanks, in the offscreen window: one row per
// rank with the figures of the analyzer's rank facts, no rank's events read until a row is opened (Enter or
// double-click), a damaged store shown as a row that says so, a current facts file beside a store read instead.
#include <gtest/gtest.h>

#include <QListWidget>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "OffscreenApp.h"
#include "RankStores.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/RankFacts.h"
#include "torchscope/gui/MainWindow.h"
#include "torchscope/gui/RankTable.h"
#include "torchscope/gui/RunFolderWindow.h"
#include "torchscope/gui/Timeline.h"
#include "torchscope/gui/TimelineView.h"
#include "torchscope/store/RunFolder.h"
#include "torchscope/testing/Subprocess.h"

namespace torchscope::gui::testing {
namespace {

using analyzer::testing::kMs;
using analyzer::testing::RankPlan;
using analyzer::testing::TempDir;
using analyzer::testing::writeFolder;

constexpr int kRanks = static_cast<int>(kRunFolderViewAboveRanks) + 1;
constexpr std::int64_t kStraggler = 2;

// Nine DDP ranks, rank 2 slower than the others outside collectives.
std::vector<std::string> writeRanks(const TempDir& dir) {
  std::vector<RankPlan> plans;
  for (std::int64_t rank = 0; rank < kRanks; ++rank) {
    RankPlan plan{rank};
    if (rank == kStraggler) plan.compute_ns = 35 * kMs;
    plans.push_back(plan);
  }
  return writeFolder(dir, plans);
}

void openFolder(RunFolderWindow& window, const std::string& folder) {
  window.resize(1600, 900);
  window.show();
  auto stores = store::expandRunFolders({folder});
  ASSERT_TRUE(stores.ok()) << stores.error().message;
  QSignalSpy ready(&window, &RunFolderWindow::tableReady);
  window.open(folder, *stores);
  ASSERT_TRUE(ready.wait(120'000));
  ASSERT_TRUE(ready.front().front().toBool()) << window.loadError();
}

QString cell(const RunFolderWindow& window, int row, RankColumn column) {
  return window.rankModel()->index(row, static_cast<int>(column)).data().toString();
}

// Opens `row` with Enter (or a double-click) and waits until its timeline is loaded.
MainWindow* openRow(RunFolderWindow& window, int row, bool double_click) {
  QTableView* view = window.rankTable();
  const QModelIndex index = window.rankModel()->index(row, 0);
  view->setCurrentIndex(index);
  QSignalSpy opened(&window, &RunFolderWindow::rankOpened);
  if (double_click) {
    const QPoint at = view->visualRect(index).center();
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
    QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, at);
  } else {
    view->setFocus();
    QTest::keyClick(view, Qt::Key_Return);
  }
  if (opened.count() != 1) return nullptr;
  auto* rank = opened.front().front().value<MainWindow*>();
  QSignalSpy loaded(rank, &MainWindow::loaded);
  if (rank->timelineView()->timeline() == nullptr && !loaded.wait(60'000)) return nullptr;
  return rank;
}

TEST(RunFolderView, OnlyOneRunFolderOfMoreRanksThanTheThresholdTakesIt) {
  TempDir dir;
  const std::string folder = dir.file("run");
  std::filesystem::create_directories(folder);
  EXPECT_TRUE(wantsRunFolderView({folder}, kRunFolderViewAboveRanks + 1));
  EXPECT_FALSE(wantsRunFolderView({folder}, kRunFolderViewAboveRanks));
  EXPECT_FALSE(wantsRunFolderView({dir.file("run.rank0.1.db")}, kRunFolderViewAboveRanks + 1));
  EXPECT_FALSE(wantsRunFolderView({folder, folder}, 2 * (kRunFolderViewAboveRanks + 1)));
}

// The command line does not link the GUI: its help spells the threshold out, and this keeps the two the same.
TEST(RunFolderView, TheGuiCommandsHelpStatesTheThreshold) {
  const auto help = torchscope::testing::runTorchscope("gui --help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("one run folder of more than " + std::to_string(kRunFolderViewAboveRanks) + " stores"),
            std::string::npos)
      << help.out;
}

TEST(RunFolderView, AMergedFindingNamesItsLineAndRanksOnce) {
  analyzer::Finding finding;
  finding.severity = analyzer::Severity::kWarning;
  finding.title = "Rank 9 recompiled differently at train.py:41";
  finding.file = "train.py";
  finding.line = 41;
  finding.evidence = {{"ranks", {9, 3}}};
  EXPECT_EQ(mergedFindingLine(finding), "[warning] Rank 9 recompiled differently at train.py:41 (ranks 3, 9)");
  finding.title = "Ranks diverge in step time";
  finding.evidence = {{"rank", 2}};
  EXPECT_EQ(mergedFindingLine(finding), "[warning] Ranks diverge in step time — train.py:41 (rank 2)");
}

TEST(RunFolderView, ShowsOneRowPerRankWithTheFiguresOfTheRankFactsAndReadsNoEventsUntilARankIsOpened) {
  TempDir dir;
  const auto stores = writeRanks(dir);
  // Rank 0's facts were mapped beside its store (`advise --rank-facts`): the view reads them instead.
  auto facts = analyzer::mapStore(stores[0]);
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  std::ofstream(stores[0] + std::string(analyzer::kRankFactsSuffix), std::ios::binary) << *facts;

  auto analysis = analyzer::analyze(stores);
  ASSERT_TRUE(analysis.ok()) << analysis.error().message;
  ASSERT_EQ(analysis->ranks.ranks.size(), static_cast<std::size_t>(kRanks));
  ASSERT_EQ(analysis->ranks.stragglers.size(), 1u);
  ASSERT_EQ(analysis->ranks.stragglers.front().rank, kStraggler);

  offscreenApplication();
  RunFolderWindow window;
  openFolder(window, dir.path().string());
  const RankTable& table = window.rankModel()->table();
  ASSERT_EQ(window.rankModel()->rowCount(), kRanks);
  EXPECT_TRUE(table.rows[0].from_facts_file);
  EXPECT_FALSE(table.rows[1].from_facts_file);
  for (int i = 0; i < kRanks; ++i) {
    const RankRow& row = table.rows[static_cast<std::size_t>(i)];
    const analyzer::RunSummary& run = analysis->runs[static_cast<std::size_t>(i)];
    const analyzer::RankSummary& rank = analysis->ranks.ranks[static_cast<std::size_t>(i)];
    SCOPED_TRACE(row.path);
    ASSERT_TRUE(row.analysed()) << row.error;
    EXPECT_EQ(row.path, stores[static_cast<std::size_t>(i)]);
    EXPECT_EQ(row.rank, i);
    EXPECT_EQ(cell(window, i, RankColumn::kRank), QString::number(i));
    EXPECT_EQ(row.steps, 8);
    EXPECT_EQ(cell(window, i, RankColumn::kSteps), "8");
    EXPECT_DOUBLE_EQ(row.median_step_s, run.steady_step_median_s);
    EXPECT_NEAR(row.mean_step_s, run.steady_step_median_s, 1e-9);  // every step of a rank lasts as long
    EXPECT_DOUBLE_EQ(row.exposed_collective_s, rank.exposed_collective_s);
    EXPECT_GT(row.exposed_collective_s, 0);
    EXPECT_EQ(row.graph_breaks, rank.graph_breaks);
    EXPECT_EQ(row.recompiles, rank.recompiles);
    EXPECT_EQ(row.straggler, i == kStraggler);
    EXPECT_EQ(cell(window, i, RankColumn::kFromMedian).contains("straggler"), i == kStraggler);
    auto own = analyzer::mapStore(row.path);
    ASSERT_TRUE(own.ok());
    EXPECT_EQ(row.findings, static_cast<std::int64_t>(nlohmann::json::parse(*own).at("findings").size()));
  }
  // The straggler's step is as long as the others' (they wait for it): its distance is in collective wait.
  EXPECT_LT(table.rows[kStraggler].exposed_collective_s, table.rows[0].exposed_collective_s);
  ASSERT_EQ(table.findings.size(), analysis->findings.size());
  bool straggler_listed = false;
  for (int i = 0; i < window.findingsList()->count(); ++i) {
    straggler_listed |= window.findingsList()->item(i)->text().contains("(rank 2)");
  }
  EXPECT_TRUE(straggler_listed);

  EXPECT_TRUE(window.rankWindows().empty());  // no timeline, so no rank's events, until a row is opened
  MainWindow* rank3 = openRow(window, 3, false);
  ASSERT_NE(rank3, nullptr);
  ASSERT_EQ(window.rankWindows().size(), 1u);
  const Timeline* timeline = rank3->timelineView()->timeline();
  ASSERT_NE(timeline, nullptr);
  ASSERT_EQ(timeline->stores.size(), 1u);
  EXPECT_EQ(timeline->stores.front().path, stores[3]);
  ASSERT_EQ(timeline->records.processes.size(), 1u);
  EXPECT_EQ(timeline->records.processes.front().rank, 3);
  EXPECT_EQ(timeline->records.steps.size(), 8u);

  MainWindow* rank5 = openRow(window, 5, true);
  ASSERT_NE(rank5, nullptr);
  EXPECT_EQ(window.rankWindows().size(), 2u);
  EXPECT_EQ(rank5->timelineView()->timeline()->stores.front().path, stores[5]);
}

TEST(RunFolderView, ADamagedStoreIsARowThatSaysSoAndTheOtherRanksAreShown) {
  TempDir dir;
  const auto stores = writeRanks(dir);
  const std::string damaged = dir.file("run.rank9.1.db");
  std::ofstream(damaged, std::ios::binary) << "not a database, a torn copy";

  offscreenApplication();
  RunFolderWindow window;
  openFolder(window, dir.path().string());
  const RankTable& table = window.rankModel()->table();
  ASSERT_EQ(window.rankModel()->rowCount(), kRanks + 1);
  for (int i = 0; i < kRanks; ++i) EXPECT_TRUE(table.rows[static_cast<std::size_t>(i)].analysed()) << i;
  const RankRow& row = table.rows.back();
  EXPECT_EQ(row.path, damaged);
  EXPECT_EQ(row.rank, 9);
  EXPECT_FALSE(row.analysed());
  const QString store = cell(window, kRanks, RankColumn::kStore);
  EXPECT_TRUE(store.startsWith("run.rank9.1.db — not analysed: ")) << store.toStdString();
  EXPECT_TRUE(store.contains("not a torchscope store")) << store.toStdString();
  EXPECT_EQ(cell(window, kRanks, RankColumn::kSteps), "-");
  EXPECT_EQ(cell(window, kRanks, RankColumn::kRank), "9");
  bool named = false;
  for (const auto& note : table.notes) named |= note.find("run.rank9.1.db") != std::string::npos;
  EXPECT_TRUE(named);
  EXPECT_EQ(window.openRank(kRanks), nullptr);
  EXPECT_TRUE(window.rankWindows().empty());
  EXPECT_EQ(cell(window, 1, RankColumn::kSteps), "8");
}

}  // namespace
}  // namespace torchscope::gui::testing
