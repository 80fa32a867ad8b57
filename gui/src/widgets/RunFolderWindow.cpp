#include "torchscope/gui/RunFolderWindow.h"

#include <QBrush>
#include <QGroupBox>
#include <QHeaderView>
#include <QListWidget>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QVBoxLayout>

#include <chrono>

#include "Panels.h"
#include "torchscope/gui/MainWindow.h"

namespace torchscope::gui {

namespace {

constexpr int kColumns = static_cast<int>(RankColumn::kCount);

}  // namespace

RankTableModel::RankTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void RankTableModel::setTable(RankTable table) {
  beginResetModel();
  table_ = std::move(table);
  endResetModel();
}

int RankTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(table_.rows.size());
}

int RankTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

QVariant RankTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const RankRow& row = table_.rows[static_cast<std::size_t>(index.row())];
  const auto column = static_cast<RankColumn>(index.column());
  if (role == Qt::DisplayRole) return QString::fromStdString(rankCell(row, column));
  if (role == Qt::ToolTipRole) return QString::fromStdString(row.analysed() ? row.path : row.path + ": " + row.error);
  if (role == Qt::ForegroundRole && (!row.analysed() || (row.straggler && column == RankColumn::kFromMedian))) {
    return QBrush(Qt::darkRed);
  }
  if (role == Qt::TextAlignmentRole && column != RankColumn::kStore && row.analysed()) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant RankTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= kColumns) return {};
  return QString::fromStdString(rankColumnTitle(static_cast<RankColumn>(section)));
}

RunFolderWindow::RunFolderWindow(QWidget* parent) : QMainWindow(parent), model_(new RankTableModel(this)) {
  table_view_ = makeRowTable(model_);
  findings_ = new QListWidget;
  auto* splitter = new QSplitter(Qt::Vertical);
  splitter->addWidget(titled(tr("Findings merged across the ranks"), findings_));
  splitter->addWidget(titled(tr("Ranks (double-click or Enter: open the rank's timeline)"), table_view_));
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 3);
  setCentralWidget(splitter);
  // Double-click and Enter both activate a row.
  connect(table_view_, &QTableView::activated, this, [this](const QModelIndex& index) { openRank(index.row()); });
  resize(1600, 900);
}

RunFolderWindow::~RunFolderWindow() {
  ++generation_;  // the builder stops at its next store and its result is dropped
  if (builder_.joinable()) builder_.join();
}

void RunFolderWindow::open(const std::string& folder, const std::vector<std::string>& stores) {
  const std::uint64_t generation = ++generation_;
  if (builder_.joinable()) builder_.join();
  folder_ = folder;
  load_error_.clear();
  model_->setTable({});
  findings_->clear();
  setWindowTitle(tr("torchscope — %1 (%2 ranks)").arg(QString::fromStdString(folder)).arg(stores.size()));
  statusBar()->showMessage(tr("Reading the facts of %1 stores…").arg(stores.size()));
  builder_ = std::thread([this, stores, generation] {
    const auto started = std::chrono::steady_clock::now();
    auto table = buildRankTable(stores, [this, generation] { return generation_.load() != generation; });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    QMetaObject::invokeMethod(
        this,
        [this, generation, seconds, table = std::move(table)]() mutable {
          if (generation == generation_.load()) applyTable(std::move(table), seconds);
        },
        Qt::QueuedConnection);
  });
}

void RunFolderWindow::applyTable(Result<RankTable> table, double seconds) {
  if (!table) {
    load_error_ = table.error().message;
    statusBar()->showMessage(QString::fromStdString(load_error_));
    emit tableReady(false);
    return;
  }
  std::size_t analysed = 0;
  std::size_t from_files = 0;
  for (const auto& row : table->rows) {
    analysed += row.analysed() ? 1 : 0;
    from_files += row.from_facts_file ? 1 : 0;
  }
  for (const auto& finding : table->findings) findings_->addItem(QString::fromStdString(mergedFindingLine(finding)));
  for (const auto& note : table->notes) findings_->addItem(QString::fromStdString("note: " + note));
  const std::size_t rows = table->rows.size();
  model_->setTable(std::move(*table));
  table_view_->resizeColumnsToContents();
  if (rows > 0) table_view_->selectRow(0);
  statusBar()->showMessage(tr("%1 of %2 stores analysed (%3 from facts files) in %4 s; no rank's events loaded")
                               .arg(analysed)
                               .arg(rows)
                               .arg(from_files)
                               .arg(seconds, 0, 'f', 1));
  emit tableReady(true);
}

MainWindow* RunFolderWindow::openRank(int row) {
  if (row < 0 || row >= model_->rowCount()) return nullptr;
  const RankRow& rank = model_->table().rows[static_cast<std::size_t>(row)];
  if (!rank.analysed()) {
    statusBar()->showMessage(QString::fromStdString(rank.path + " cannot be opened: " + rank.error));
    return nullptr;
  }
  auto window = std::make_unique<MainWindow>();
  window->resize(size());
  window->show();
  window->open({rank.path});
  MainWindow* opened = window.get();
  rank_windows_.push_back(std::move(window));
  emit rankOpened(opened);
  return opened;
}

}  // namespace torchscope::gui
