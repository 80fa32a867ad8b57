#include "torchscope/gui/MainWindow.h"

#include <QAction>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

#include <chrono>

#include "torchscope/gui/ItemModels.h"
#include "torchscope/gui/TimelineView.h"

namespace torchscope::gui {

namespace {

QTableView* makeTable(QAbstractItemModel* model) {
  auto* table = new QTableView;
  table->setModel(model);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setSelectionMode(QAbstractItemView::SingleSelection);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->horizontalHeader()->setStretchLastSection(true);
  table->verticalHeader()->hide();
  table->verticalHeader()->setDefaultSectionSize(20);
  table->setWordWrap(false);
  return table;
}

QGroupBox* titled(const QString& title, QWidget* content) {
  auto* box = new QGroupBox(title);
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(content);
  return box;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  view_ = new TimelineView;
  findings_ = new FindingsModel(this);
  details_ = new DetailsModel(this);
  findings_table_ = makeTable(findings_);
  auto* details_table = makeTable(details_);
  details_table->setSelectionMode(QAbstractItemView::NoSelection);

  auto* side = new QSplitter(Qt::Vertical);
  side->addWidget(titled(tr("Findings"), findings_table_));
  side->addWidget(titled(tr("Details"), details_table));
  side->setSizes({300, 500});
  auto* central = new QSplitter(Qt::Horizontal);
  central->addWidget(view_);
  central->addWidget(side);
  central->setStretchFactor(0, 3);
  central->setStretchFactor(1, 1);
  setCentralWidget(central);

  auto* toolbar = addToolBar(tr("Timeline"));
  toolbar->setMovable(false);
  QAction* fit = toolbar->addAction(tr("Fit all"), view_, &TimelineView::fitAll);
  fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  fit->setToolTip(tr("Show the whole run (F, Ctrl+0). Wheel: zoom, drag: pan, Shift+wheel: scroll"));
  toolbar->addSeparator();
  search_ = new QLineEdit;
  search_->setPlaceholderText(tr("Search slices by name (Ctrl+F)"));
  search_->setClearButtonEnabled(true);
  search_->setMaximumWidth(360);
  toolbar->addWidget(search_);
  toolbar->addAction(tr("Previous"), this, [this] { nextMatch(false); })->setShortcut(QKeySequence::FindPrevious);
  toolbar->addAction(tr("Next"), this, [this] { nextMatch(true); })->setShortcut(QKeySequence::FindNext);
  match_label_ = new QLabel;
  toolbar->addWidget(match_label_);
  auto* find = new QAction(this);
  find->setShortcut(QKeySequence::Find);
  connect(find, &QAction::triggered, this, [this] {
    search_->setFocus();
    search_->selectAll();
  });
  addAction(find);

  connect(search_, &QLineEdit::textChanged, this, [this] { runSearch(); });
  connect(search_, &QLineEdit::returnPressed, this, [this] { nextMatch(true); });
  connect(view_, &TimelineView::selectionChanged, this, [this] { updateDetails(); });
  connect(findings_table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (current.isValid()) showFinding(current.row());
          });
  resize(1600, 900);
}

MainWindow::~MainWindow() {
  ++generation_;  // the loader stops at its next table and its result is dropped
  if (loader_.joinable()) loader_.join();
}

void MainWindow::open(const std::string& path) {
  const std::uint64_t generation = ++generation_;
  if (loader_.joinable()) loader_.join();
  timeline_.reset();
  view_->setTimeline(nullptr);
  findings_->setFindings({});
  details_->setFields({});
  load_error_.clear();
  setWindowTitle(QStringLiteral("torchscope — %1").arg(QString::fromStdString(path)));
  statusBar()->showMessage(tr("Loading %1…").arg(QString::fromStdString(path)));
  loader_ = std::thread([this, path, generation] {
    const auto started = std::chrono::steady_clock::now();
    auto result = loadTimeline(path, [this, generation] { return generation_.load() != generation; });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    QMetaObject::invokeMethod(
        this,
        [this, generation, seconds, result = std::move(result)] {
          if (generation != generation_.load()) return;
          if (result) {
            applyTimeline(result.value(), seconds);
          } else {
            applyError(result.error().message);
          }
        },
        Qt::QueuedConnection);
  });
}

void MainWindow::applyTimeline(std::shared_ptr<const Timeline> timeline, double seconds) {
  timeline_ = std::move(timeline);
  view_->setTimeline(timeline_);
  findings_->setFindings(timeline_->records.findings);
  findings_table_->resizeColumnsToContents();
  statusBar()->showMessage(tr("%1 slices on %2 tracks, %3 findings, loaded in %4 s")
                               .arg(timeline_->sliceCount())
                               .arg(timeline_->tracks.size())
                               .arg(timeline_->records.findings.size())
                               .arg(seconds, 0, 'f', 2));
  if (!search_->text().isEmpty()) runSearch();
  emit loaded(true);
}

void MainWindow::applyError(const std::string& message) {
  load_error_ = message;
  statusBar()->showMessage(tr("Could not load the store: %1").arg(QString::fromStdString(message)));
  emit loaded(false);
}

void MainWindow::updateDetails() {
  const auto selection = view_->selection();
  if (timeline_ && selection) details_->setFields(describe(*timeline_, *selection));
}

void MainWindow::showFinding(int row) {
  if (!timeline_ || row < 0 || static_cast<std::size_t>(row) >= findings_->table().rows()) return;
  const store::Finding& finding = findings_->table().finding(static_cast<std::size_t>(row));
  const FindingLocation location = locateFinding(*timeline_, finding);
  if (!location.slices.empty()) {
    statusBar()->showMessage(tr("%1: %2 occurrence(s) on the timeline, the first one selected")
                                 .arg(QString::fromStdString(finding.rule))
                                 .arg(location.slices.size()));
    view_->select(location.slices.front(), true);
    return;
  }
  view_->select(std::nullopt, false);
  details_->setFields(describe(finding));
  if (location.range) {
    view_->zoomToRange(location.range->first, location.range->second);
    statusBar()->showMessage(tr("%1: showing the time range of its evidence").arg(QString::fromStdString(finding.rule)));
  } else {
    statusBar()->showMessage(tr("%1: no place on the timeline").arg(QString::fromStdString(finding.rule)));
  }
}

void MainWindow::runSearch() {
  const std::string needle = search_->text().toStdString();
  matches_ = timeline_ ? timeline_->search(needle) : std::vector<SliceRef>{};
  match_index_ = matches_.size();  // none visited yet
  view_->setHighlight(needle);
  match_label_->setText(needle.empty() ? QString() : tr("  %1 matches").arg(matches_.size()));
}

void MainWindow::nextMatch(bool forward) {
  if (matches_.empty()) return;
  if (match_index_ >= matches_.size()) {
    match_index_ = forward ? 0 : matches_.size() - 1;
  } else {
    match_index_ = (match_index_ + (forward ? 1 : matches_.size() - 1)) % matches_.size();
  }
  view_->select(matches_[match_index_], true);
  match_label_->setText(tr("  %1 / %2").arg(match_index_ + 1).arg(matches_.size()));
}

}  // namespace torchscope::gui
