#include "torchscope/gui/ItemModels.h"

#include <QColor>
#include <QTextDocument>

namespace torchscope::gui {

namespace {

QVariant severityColour(analyzer::Severity severity) {
  switch (severity) {
    case analyzer::Severity::kError: return QColor(190, 30, 30);
    case analyzer::Severity::kWarning: return QColor(170, 110, 0);
    case analyzer::Severity::kInfo: break;
  }
  return {};
}

// Qt shows a tooltip that looks like HTML as rich text: store text (kernel, file and function names,
// messages) is escaped so that it always reads as written.
QString plainTooltip(const std::string& text) {
  return Qt::convertFromPlainText(QString::fromStdString(text), Qt::WhiteSpaceNormal);
}

}  // namespace

FindingsModel::FindingsModel(QObject* parent) : QAbstractTableModel(parent) {}

void FindingsModel::setFindings(std::vector<analyzer::Finding> findings) {
  beginResetModel();
  table_ = FindingsTable(std::move(findings));
  endResetModel();
}

int FindingsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(table_.rows());
}

int FindingsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : FindingsTable::kColumnCount;
}

QVariant FindingsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto row = static_cast<std::size_t>(index.row());
  switch (role) {
    case Qt::DisplayRole: return QString::fromStdString(table_.cell(row, index.column()));
    case Qt::ToolTipRole: return plainTooltip(table_.finding(row).message);
    case Qt::ForegroundRole:
      return index.column() == FindingsTable::kSeverity ? severityColour(table_.finding(row).severity) : QVariant();
    default: return {};
  }
}

QVariant FindingsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return QString::fromStdString(FindingsTable::header(section));
}

DetailsModel::DetailsModel(QObject* parent) : QAbstractTableModel(parent) {}

void DetailsModel::setFields(std::vector<Field> fields) {
  beginResetModel();
  fields_ = std::move(fields);
  endResetModel();
}

int DetailsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(fields_.size());
}

int DetailsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : 2; }

QVariant DetailsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Field& field = fields_[static_cast<std::size_t>(index.row())];
  const std::string& text = index.column() == 0 ? field.name : field.value;
  switch (role) {
    case Qt::DisplayRole: return QString::fromStdString(text);
    case Qt::ToolTipRole: return plainTooltip(text);
    default: return {};
  }
}

QVariant DetailsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return section == 0 ? QStringLiteral("Field") : QStringLiteral("Value");
}

StatsModel::StatsModel(QObject* parent) : QAbstractTableModel(parent) {}

void StatsModel::setRange(const Timeline& timeline, Nanos begin_ns, Nanos end_ns) {
  beginResetModel();
  table_.setRange(timeline, begin_ns, end_ns);
  table_.sort(sort_column_, sort_order_ == Qt::AscendingOrder);
  endResetModel();
}

void StatsModel::clear() {
  beginResetModel();
  table_ = StatsTable();
  endResetModel();
}

int StatsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(table_.rows());
}

int StatsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : StatsTable::kColumnCount;
}

QVariant StatsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto row = static_cast<std::size_t>(index.row());
  switch (role) {
    case Qt::DisplayRole: return QString::fromStdString(table_.cell(row, index.column()));
    case Qt::ToolTipRole: return plainTooltip(table_.cell(row, StatsTable::kName));
    case Qt::TextAlignmentRole:
      return index.column() >= StatsTable::kCount ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    default: return {};
  }
}

QVariant StatsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return QString::fromStdString(StatsTable::header(section));
}

void StatsModel::sort(int column, Qt::SortOrder order) {
  if (column < 0 || column >= StatsTable::kColumnCount) return;
  sort_column_ = column;
  sort_order_ = order;
  // A reset rather than a layout change: the rows keep no identity that persistent indexes could follow.
  beginResetModel();
  table_.sort(column, order == Qt::AscendingOrder);
  endResetModel();
}

RegionsModel::RegionsModel(QObject* parent) : QAbstractTableModel(parent) {}

void RegionsModel::load(const std::string& path) {
  beginResetModel();
  panel_.load(path);
  endResetModel();
}

void RegionsModel::clear() {
  beginResetModel();
  panel_ = RegionsPanel();
  endResetModel();
}

int RegionsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(panel_.rows());
}

int RegionsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : RegionsPanel::kColumnCount;
}

QVariant RegionsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto row = static_cast<std::size_t>(index.row());
  switch (role) {
    case Qt::DisplayRole: return QString::fromStdString(panel_.cell(row, index.column()));
    case Qt::ToolTipRole: return plainTooltip(panel_.cell(row, index.column()));
    default: return {};
  }
}

QVariant RegionsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return QString::fromStdString(RegionsPanel::header(section));
}

}  // namespace torchscope::gui
