// Qt item models for the side panels: thin adapters over FindingsTable, StatsTable and the Field
// lists of PanelFields.h, so the tables' content is tested without Qt and the adapters with QAbstractItemModelTester.
#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "torchscope/gui/PanelFields.h"
#include "torchscope/gui/RegionsPanel.h"
#include "torchscope/gui/StatsTable.h"

namespace torchscope::gui {

class FindingsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  explicit FindingsModel(QObject* parent = nullptr);
  void setFindings(std::vector<analyzer::Finding> findings);
  [[nodiscard]] const FindingsTable& table() const { return table_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  FindingsTable table_{{}};
};

class DetailsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  explicit DetailsModel(QObject* parent = nullptr);
  void setFields(std::vector<Field> fields);
  [[nodiscard]] const std::vector<Field>& fields() const { return fields_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<Field> fields_;
};

// The statistics view over the visible range; sorting is the table's own (QTableView::setSortingEnabled).
class StatsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  explicit StatsModel(QObject* parent = nullptr);
  void setRange(const Timeline& timeline, Nanos begin_ns, Nanos end_ns);
  // No rows: the table names slices through a timeline that is about to go.
  void clear();
  [[nodiscard]] const StatsTable& table() const { return table_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  void sort(int column, Qt::SortOrder order) override;

 private:
  StatsTable table_;
  int sort_column_ = StatsTable::kTotal;
  Qt::SortOrder sort_order_ = Qt::DescendingOrder;
};

// The compiled-region table of one store (the "Compiled regions" tab), read when the tab is first shown.
class RegionsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  explicit RegionsModel(QObject* parent = nullptr);
  void load(const std::string& path);
  void clear();
  [[nodiscard]] const RegionsPanel& panel() const { return panel_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  RegionsPanel panel_;
};

}  // namespace torchscope::gui
