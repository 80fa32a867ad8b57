#include "torchscope/gui/MainWindow.h"

#include <QAction>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTextBlock>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include <chrono>
#include <filesystem>

#include "Panels.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/gui/FlameView.h"
#include "torchscope/gui/ItemModels.h"
#include "torchscope/gui/TimelineView.h"

namespace torchscope::gui {

namespace {

// The statistics follow zoom and pan once the view has been still this long.
constexpr int kStatisticsDelayMs = 120;

QPlainTextEdit* makeText() {
  auto* text = new QPlainTextEdit;
  text->setReadOnly(true);
  text->setLineWrapMode(QPlainTextEdit::NoWrap);
  return text;
}

// Slices that match the search in tracks the statistics do not count (steps, compiles, markers).
std::uint64_t uncountedMatches(const Timeline& timeline, const std::vector<bool>& names) {
  std::uint64_t count = 0;
  for (const Track& track : timeline.tracks) {
    if (track.kind != TrackKind::kSteps && track.kind != TrackKind::kCompiles && !track.markers()) continue;
    for (const Lane& lane : track.lanes) {
      for (const Slice& slice : lane.slices()) count += names[slice.name] ? 1 : 0;
    }
  }
  return count;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  view_ = new TimelineView;
  findings_ = new FindingsModel(this);
  details_ = new DetailsModel(this);
  stats_ = new StatsModel(this);
  findings_table_ = makeRowTable(findings_);
  auto* details_table = makeRowTable(details_);
  details_table->setSelectionMode(QAbstractItemView::NoSelection);
  stats_table_ = makeRowTable(stats_);
  stats_table_->setSortingEnabled(true);
  stats_table_->sortByColumn(StatsTable::kTotal, Qt::DescendingOrder);
  finding_text_ = makeText();
  finding_text_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  source_text_ = makeText();

  regions_ = new RegionsModel(this);
  regions_summary_ = new QLabel;
  regions_summary_->setWordWrap(true);
  regions_tab_ = titled(QString(), makeRowTable(regions_));
  if (auto* layout = regions_tab_->layout()) layout->addWidget(regions_summary_);

  flame_ = new FlameView;
  auto* flame_scroll = new QScrollArea;
  flame_scroll->setWidgetResizable(true);
  flame_scroll->setWidget(flame_);
  flame_summary_ = new QLabel;
  flame_summary_->setWordWrap(true);
  flame_tab_ = titled(QString(), flame_summary_);
  if (auto* layout = flame_tab_->layout()) layout->addWidget(flame_scroll);
  connect(flame_, &FlameView::userFrameClicked, this,
          [this](const QString& file, qint64 line) { showSourceLine(file.toStdString(), line); });

  bottom_tabs_ = new QTabWidget;
  bottom_tabs_->addTab(stats_table_, tr("Statistics (visible range)"));
  bottom_tabs_->addTab(source_text_, tr("Source"));
  bottom_tabs_->addTab(regions_tab_, tr("Compiled regions"));
  bottom_tabs_->addTab(flame_tab_, tr("Flame graph"));
  connect(bottom_tabs_, &QTabWidget::currentChanged, this, [this](int index) {
    if (bottom_tabs_->widget(index) == regions_tab_) showRegions();
    if (bottom_tabs_->widget(index) == flame_tab_) showFlameGraph();
  });
  auto* centre = new QSplitter(Qt::Vertical);
  centre->addWidget(view_);
  centre->addWidget(bottom_tabs_);
  centre->setStretchFactor(0, 3);
  centre->setStretchFactor(1, 1);

  auto* side = new QSplitter(Qt::Vertical);
  side->addWidget(titled(tr("Findings"), findings_table_));
  side->addWidget(titled(tr("Finding"), finding_text_));
  side->addWidget(titled(tr("Details"), details_table));
  side->setSizes({260, 220, 320});
  auto* central = new QSplitter(Qt::Horizontal);
  central->addWidget(centre);
  central->addWidget(side);
  central->setStretchFactor(0, 3);
  central->setStretchFactor(1, 1);
  setCentralWidget(central);

  auto* toolbar = addToolBar(tr("Timeline"));
  toolbar->setMovable(false);
  QAction* fit = toolbar->addAction(tr("Fit all"), view_, &TimelineView::fitAll);
  fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  fit->setToolTip(tr("Show the whole run (F, Ctrl+0). Wheel: zoom, drag: pan, Shift+wheel: scroll"));
  QAction* focus = toolbar->addAction(tr("GPU work"), view_, &TimelineView::showFocus);
  focus->setToolTip(tr("Show where the GPUs worked (the first view)"));
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

  stats_timer_ = new QTimer(this);
  stats_timer_->setSingleShot(true);
  stats_timer_->setInterval(kStatisticsDelayMs);
  connect(stats_timer_, &QTimer::timeout, this, [this] { refreshStatistics(); });
  connect(view_, &TimelineView::rangeChanged, stats_timer_, qOverload<>(&QTimer::start));
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

void MainWindow::open(const std::vector<std::string>& paths, const LoadLimits& limits) {
  const std::uint64_t generation = ++generation_;
  if (loader_.joinable()) loader_.join();
  paths_ = paths;
  view_->setTimeline(nullptr, nullptr);
  stats_timer_->stop();
  stats_->clear();
  source_.reset();
  timeline_.reset();
  findings_->setFindings({});
  regions_->clear();
  regions_read_ = false;
  regions_summary_->clear();
  flame_->load("");
  flame_read_ = false;
  flame_summary_->clear();
  details_->setFields({});
  finding_text_->clear();
  source_text_->clear();
  load_error_.clear();
  const QString shown = QString::fromStdString(paths.empty() ? std::string() : paths.front()) +
                        (paths.size() > 1 ? tr(" and %1 more").arg(paths.size() - 1) : QString());
  setWindowTitle(QStringLiteral("torchscope — %1").arg(shown));
  statusBar()->showMessage(tr("Loading %1…").arg(shown));
  loader_ = std::thread([this, paths, generation, limits] {
    const auto stale = [this, generation] { return generation_.load() != generation; };
    const auto started = std::chrono::steady_clock::now();
    const auto elapsed = [started] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    };
    const auto show_overview = [this, generation, &elapsed](std::shared_ptr<const Timeline> overview) {
      QMetaObject::invokeMethod(
          this,
          [this, generation, seconds = elapsed(), overview = std::move(overview)] {
            if (generation == generation_.load()) applyTimeline(overview, seconds);
          },
          Qt::QueuedConnection);
    };
    auto result = loadTimeline(paths, stale, limits, show_overview);
    const double seconds = elapsed();
    const bool analyse = result && result.value()->records.findings.empty();
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
    if (!analyse || stale()) return;
    // A store without findings (an imported trace, a run not yet advised) is analysed here, without
    // writing to it, once the timeline is on screen.
    auto analysis = analyzer::analyze(paths);
    std::vector<analyzer::Finding> findings;
    if (analysis) findings = std::move(analysis.value().findings);
    QMetaObject::invokeMethod(
        this,
        [this, generation, analysed_ok = analysis.ok(), findings = std::move(findings)]() mutable {
          if (generation != generation_.load()) return;
          if (analysed_ok) applyFindings(std::move(findings));
          emit analysed(analysed_ok);
        },
        Qt::QueuedConnection);
  });
}

void MainWindow::applyTimeline(std::shared_ptr<const Timeline> timeline, double seconds) {
  const bool refining = timeline_ && timeline_->resolution == Resolution::kOverview;
  timeline_ = std::move(timeline);
  load_seconds_ = seconds;
  auto source = DetailSource::open(timeline_);
  auto replaced = std::move(source_);  // the view lets go of it first
  source_ = source ? std::move(source).value() : nullptr;
  if (refining) {
    // Same tracks, lanes and findings as the overview; new: the lanes' detail and names, the
    // statistics and the idle gaps.
    view_->refineTimeline(timeline_, source_.get());
    refreshStatistics();
    if (!search_->text().isEmpty()) runSearch();
    showLoadStatus();
    emit loaded(true);
    return;
  }
  view_->setTimeline(timeline_, source_.get());
  applyFindings(timeline_->records.findings);
  refreshStatistics();
  if (!search_->text().isEmpty()) runSearch();
  if (timeline_->resolution == Resolution::kOverview) {
    emit overviewShown();
  } else {
    emit loaded(true);
  }
}

void MainWindow::showRegions() {
  if (bottom_tabs_->currentWidget() != regions_tab_) bottom_tabs_->setCurrentWidget(regions_tab_);  // comes back here
  if (regions_read_ || paths_.empty()) return;
  regions_read_ = true;
  if (paths_.size() != 1) {
    regions_summary_->setText(tr("The region table reads one store: open one rank's store."));
    return;
  }
  regions_->load(paths_.front());
  regions_summary_->setText(QString::fromStdString(regions_->panel().summary()));
}

void MainWindow::showFlameGraph() {
  if (bottom_tabs_->currentWidget() != flame_tab_) bottom_tabs_->setCurrentWidget(flame_tab_);  // comes back here
  if (flame_read_ || paths_.empty()) return;
  flame_read_ = true;
  if (paths_.size() != 1) {
    flame_summary_->setText(tr("The flame graph reads one store: open one rank's store."));
    return;
  }
  flame_->load(paths_.front());
  flame_summary_->setText(QString::fromStdString(flame_->panel().summary()));
}

void MainWindow::applyFindings(std::vector<analyzer::Finding> findings) {
  findings_->setFindings(std::move(findings));
  findings_table_->resizeColumnsToContents();
  showLoadStatus();
}

void MainWindow::showLoadStatus() {
  if (!timeline_) return;
  if (timeline_->resolution == Resolution::kOverview) {
    statusBar()->showMessage(tr("Overview of %1 slices on %2 tracks, %3 findings, in %4 s; showing %5; reading "
                                "names, statistics and full detail…")
                                 .arg(timeline_->sliceCount())
                                 .arg(timeline_->tracks.size())
                                 .arg(findings_->rowCount())
                                 .arg(load_seconds_, 0, 'f', 2)
                                 .arg(QString::fromStdString(timeline_->focus.what)));
    return;
  }
  statusBar()->showMessage(tr("%1 slices on %2 tracks, %3 findings, loaded in %4 s; showing %5")
                               .arg(timeline_->sliceCount())
                               .arg(timeline_->tracks.size())
                               .arg(findings_->rowCount())
                               .arg(load_seconds_, 0, 'f', 2)
                               .arg(QString::fromStdString(timeline_->focus.what)));
}

void MainWindow::applyError(const std::string& message) {
  load_error_ = message;
  statusBar()->showMessage(tr("Could not load the store: %1").arg(QString::fromStdString(message)));
  emit loaded(false);
}

void MainWindow::updateDetails() {
  const auto selection = view_->selection();
  if (!timeline_ || !selection) return;
  auto fields = source_ ? source_->describe(*selection) : Result<std::vector<Field>>(describe(*timeline_, *selection));
  details_->setFields(fields ? std::move(fields).value() : describe(*timeline_, *selection));
}

void MainWindow::refreshStatistics() {
  stats_timer_->stop();
  if (timeline_) stats_->setRange(*timeline_, view_->timeAxis().beginNs(), view_->timeAxis().endNs());
}

void MainWindow::showSource(const analyzer::Finding& finding) { showSourceLine(finding.file, finding.line); }

void MainWindow::showSourceLine(const std::string& file, std::int64_t line_number) {
  std::vector<std::string> roots;
  for (const std::string& path : paths_) roots.push_back(std::filesystem::path(path).parent_path().string());
  std::error_code error;
  roots.push_back(std::filesystem::current_path(error).string());
  source_file_ = readSource(file, line_number, roots);
  if (!source_file_.error.empty()) {
    source_text_->setPlainText(QString::fromStdString(source_file_.error));
    return;
  }
  QString text;
  for (const std::string& line : source_file_.lines) text += QString::fromStdString(line) + QLatin1Char('\n');
  source_text_->setPlainText(text);
  if (source_file_.line < 1 || source_file_.line > static_cast<std::int64_t>(source_file_.lines.size())) return;
  QTextEdit::ExtraSelection highlight;
  highlight.format.setBackground(QColor(255, 230, 150));
  highlight.format.setProperty(QTextFormat::FullWidthSelection, true);
  highlight.cursor = QTextCursor(source_text_->document()->findBlockByNumber(static_cast<int>(source_file_.line - 1)));
  source_text_->setExtraSelections({highlight});
  source_text_->setTextCursor(highlight.cursor);
  source_text_->centerCursor();
  bottom_tabs_->setCurrentWidget(source_text_);
}

void MainWindow::showFinding(int row) {
  if (!timeline_ || row < 0 || static_cast<std::size_t>(row) >= findings_->table().rows()) return;
  const analyzer::Finding& finding = findings_->table().finding(static_cast<std::size_t>(row));
  finding_text_->setPlainText(QString::fromStdString(findingText(finding, timeline_->records.fix_experiments)));
  showSource(finding);
  const FindingLocation location = locateFinding(*timeline_, finding);
  if (!location.slices.empty()) {
    statusBar()->showMessage(tr("%1: %2 occurrence(s) on the timeline, the first one selected")
                                 .arg(QString::fromStdString(std::string(finding.rule.text())))
                                 .arg(location.slices.size()));
    view_->select(location.slices.front(), true);
    return;
  }
  view_->select(std::nullopt, false);
  details_->setFields(describe(finding));
  if (location.track) view_->revealTrack(*location.track);
  if (location.range) {
    view_->zoomToRange(location.range->first, location.range->second);
    statusBar()->showMessage(
        tr("%1: showing the time range of its evidence").arg(QString::fromStdString(std::string(finding.rule.text()))));
  } else {
    statusBar()->showMessage(
        tr("%1: no place on the timeline").arg(QString::fromStdString(std::string(finding.rule.text()))));
  }
}

void MainWindow::runSearch() {
  const std::string needle = search_->text().toStdString();
  search_names_ = timeline_ ? timeline_->matchingNames(needle) : std::vector<bool>{};
  view_->setHighlight(search_names_);
  if (needle.empty() || !timeline_) {
    match_label_->clear();
    return;
  }
  const std::uint64_t count = timeline_->stats.count(search_names_) + uncountedMatches(*timeline_, search_names_);
  match_label_->setText(tr("  %1 matches").arg(count));
}

void MainWindow::nextMatch(bool forward) {
  if (!source_ || search_names_.empty()) return;
  auto next = source_->findNext(search_names_, view_->selection(), forward);
  if (!next) {
    statusBar()->showMessage(tr("Search failed: %1").arg(QString::fromStdString(next.error().message)));
    return;
  }
  if (!next.value()) {
    // Past the last match: wrap around.
    next = source_->findNext(search_names_, std::nullopt, forward);
    if (!next || !next.value()) return;
  }
  view_->select(*next.value(), true);
}

}  // namespace torchscope::gui
