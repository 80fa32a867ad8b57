// The timeline window: the timeline in the centre with the statistics of the visible range and the
// source pane under it, findings, the selected finding's explanation and the selection's details on
// the right, a search box and fit buttons in the toolbar. Stores are loaded on a background thread
// (a large one shown first as an overview, then refined in place), then analysed there when they
// hold no findings (an imported trace); each open() bumps a generation counter so that a stale load
// is cancelled and its results dropped.
#pragma once

#include <QMainWindow>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "torchscope/gui/DetailSource.h"
#include "torchscope/gui/FindingPanel.h"

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTableView;
class QTabWidget;
class QTimer;

namespace torchscope::gui {

class DetailsModel;
class FlameView;
class FindingsModel;
class RegionsModel;
class StatsModel;
class TimelineView;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;
  MainWindow(const MainWindow&) = delete;
  MainWindow& operator=(const MainWindow&) = delete;

  // Starts loading the stores (several: the ranks of one job); overviewShown() is emitted on the GUI
  // thread when the overview of a large store is shown, loaded() when the full timeline is, and
  // analysed() when findings computed for it arrive.
  void open(const std::vector<std::string>& paths, const LoadLimits& limits = {});

  [[nodiscard]] TimelineView* timelineView() const { return view_; }
  [[nodiscard]] FindingsModel* findingsModel() const { return findings_; }
  [[nodiscard]] DetailsModel* detailsModel() const { return details_; }
  [[nodiscard]] StatsModel* statsModel() const { return stats_; }
  [[nodiscard]] RegionsModel* regionsModel() const { return regions_; }
  // Shows the "Compiled regions" tab, reading the table of the store (one store only) the first time.
  void showRegions();
  [[nodiscard]] FlameView* flameView() const { return flame_; }
  // Shows the "Flame graph" tab, reading the sampled stacks of the store (one store only) the first time.
  void showFlameGraph();
  [[nodiscard]] QTableView* findingsTable() const { return findings_table_; }
  [[nodiscard]] QLineEdit* searchBox() const { return search_; }
  [[nodiscard]] QPlainTextEdit* findingPane() const { return finding_text_; }
  [[nodiscard]] QPlainTextEdit* sourcePane() const { return source_text_; }
  [[nodiscard]] const SourceFile& source() const { return source_file_; }
  [[nodiscard]] const std::string& loadError() const { return load_error_; }

  // Selects the finding at `row` of the findings panel, zooms to where it shows, explains it and
  // shows its source line.
  void showFinding(int row);
  // Moves to the next (or previous) slice matching the search box.
  void nextMatch(bool forward);
  // Recomputes the statistics for the visible range now (it follows zoom and pan after a pause).
  void refreshStatistics();

 signals:
  void overviewShown();
  void loaded(bool ok);
  void analysed(bool ok);

 private:
  void applyTimeline(std::shared_ptr<const Timeline> timeline, double seconds);
  void applyFindings(std::vector<analyzer::Finding> findings);
  // What was loaded, how fast, and what the view shows; again once findings of an analysis arrive.
  void showLoadStatus();
  void applyError(const std::string& message);
  void updateDetails();
  void runSearch();
  void showSource(const analyzer::Finding& finding);
  // Shows `file` around `line_number` in the source pane (the findings' locator; the flame graph's user frames).
  void showSourceLine(const std::string& file, std::int64_t line_number);

  TimelineView* view_ = nullptr;
  FindingsModel* findings_ = nullptr;
  DetailsModel* details_ = nullptr;
  StatsModel* stats_ = nullptr;
  RegionsModel* regions_ = nullptr;
  QLabel* regions_summary_ = nullptr;
  QWidget* regions_tab_ = nullptr;
  bool regions_read_ = false;
  FlameView* flame_ = nullptr;
  QLabel* flame_summary_ = nullptr;
  QWidget* flame_tab_ = nullptr;
  bool flame_read_ = false;
  QTableView* findings_table_ = nullptr;
  QTableView* stats_table_ = nullptr;
  QTabWidget* bottom_tabs_ = nullptr;
  QPlainTextEdit* finding_text_ = nullptr;
  QPlainTextEdit* source_text_ = nullptr;
  QLineEdit* search_ = nullptr;
  QLabel* match_label_ = nullptr;
  QTimer* stats_timer_ = nullptr;
  std::vector<std::string> paths_;
  std::shared_ptr<const Timeline> timeline_;
  std::unique_ptr<DetailSource> source_;
  std::vector<bool> search_names_;
  SourceFile source_file_;
  std::string load_error_;
  double load_seconds_ = 0;
  std::atomic<std::uint64_t> generation_{0};
  std::thread loader_;
};

}  // namespace torchscope::gui
