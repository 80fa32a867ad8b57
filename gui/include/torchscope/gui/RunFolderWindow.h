// The window of a large run folder (docs/gui.md, "Large run folders"): the findings merged across its ranks above a
// table of one row per rank (RankTable.h), built on a background thread from the rank facts. Double-click or Enter
// on a row opens that rank's timeline in a MainWindow of its own: its events are read only then.
#pragma once

#include <QAbstractTableModel>
#include <QMainWindow>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "torchscope/gui/RankTable.h"

class QListWidget;
class QTableView;

namespace torchscope::gui {

class MainWindow;

class RankTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  explicit RankTableModel(QObject* parent = nullptr);
  void setTable(RankTable table);
  [[nodiscard]] const RankTable& table() const { return table_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  RankTable table_;
};

class RunFolderWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit RunFolderWindow(QWidget* parent = nullptr);
  ~RunFolderWindow() override;
  RunFolderWindow(const RunFolderWindow&) = delete;
  RunFolderWindow& operator=(const RunFolderWindow&) = delete;

  // Builds the table of `stores` (the folder's, by rank); tableReady() is emitted on the GUI thread when it is shown.
  void open(const std::string& folder, const std::vector<std::string>& stores);
  // Opens the timeline of the rank at `row` in a window of its own (nothing for a store not analysed); returns it.
  MainWindow* openRank(int row);

  [[nodiscard]] RankTableModel* rankModel() const { return model_; }
  [[nodiscard]] QTableView* rankTable() const { return table_view_; }
  [[nodiscard]] QListWidget* findingsList() const { return findings_; }
  [[nodiscard]] const std::vector<std::unique_ptr<MainWindow>>& rankWindows() const { return rank_windows_; }
  [[nodiscard]] const std::string& loadError() const { return load_error_; }

 signals:
  void tableReady(bool ok);
  void rankOpened(MainWindow* window);

 private:
  void applyTable(Result<RankTable> table, double seconds);

  RankTableModel* model_ = nullptr;
  QTableView* table_view_ = nullptr;
  QListWidget* findings_ = nullptr;
  std::vector<std::unique_ptr<MainWindow>> rank_windows_;
  std::string folder_;
  std::string load_error_;
  std::atomic<std::uint64_t> generation_{0};
  std::thread builder_;
};

}  // namespace torchscope::gui
