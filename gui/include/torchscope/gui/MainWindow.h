// The timeline window: the timeline in the centre, findings and the selection's details on the
// right, a search box and fit button in the toolbar. The store is loaded on a background thread;
// each open() bumps a generation counter so that a stale load is cancelled and its result dropped.
#pragma once

#include <QMainWindow>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "torchscope/gui/Timeline.h"

class QLabel;
class QLineEdit;
class QTableView;

namespace torchscope::gui {

class DetailsModel;
class FindingsModel;
class TimelineView;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;
  MainWindow(const MainWindow&) = delete;
  MainWindow& operator=(const MainWindow&) = delete;

  // Starts loading the store; loaded() is emitted on the GUI thread when done.
  void open(const std::string& path);

  [[nodiscard]] TimelineView* timelineView() const { return view_; }
  [[nodiscard]] FindingsModel* findingsModel() const { return findings_; }
  [[nodiscard]] DetailsModel* detailsModel() const { return details_; }
  [[nodiscard]] QTableView* findingsTable() const { return findings_table_; }
  [[nodiscard]] QLineEdit* searchBox() const { return search_; }
  [[nodiscard]] const std::string& loadError() const { return load_error_; }

  // Selects the finding at `row` of the findings panel and zooms to where it shows.
  void showFinding(int row);
  // Moves to the next (or previous) slice matching the search box.
  void nextMatch(bool forward);

 signals:
  void loaded(bool ok);

 private:
  void applyTimeline(std::shared_ptr<const Timeline> timeline, double seconds);
  void applyError(const std::string& message);
  void updateDetails();
  void runSearch();

  TimelineView* view_ = nullptr;
  FindingsModel* findings_ = nullptr;
  DetailsModel* details_ = nullptr;
  QTableView* findings_table_ = nullptr;
  QLineEdit* search_ = nullptr;
  QLabel* match_label_ = nullptr;
  std::shared_ptr<const Timeline> timeline_;
  std::vector<SliceRef> matches_;
  std::size_t match_index_ = 0;
  std::string load_error_;
  std::atomic<std::uint64_t> generation_{0};
  std::thread loader_;
};

}  // namespace torchscope::gui
