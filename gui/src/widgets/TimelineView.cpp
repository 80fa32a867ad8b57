#include "torchscope/gui/TimelineView.h"

#include <fmt/format.h>

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>

#include "WindowFetcher.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/gui/PanelFields.h"
#include "torchscope/gui/Text.h"
#include "torchscope/gui/TimelinePainter.h"

namespace torchscope::gui {

namespace {

constexpr double kWheelZoomPerNotch = 0.8;  // one wheel notch (120 units) shows 80% of the time
constexpr int kDragThresholdPx = 3;
constexpr double kKeyZoomFactor = 0.7;
constexpr double kKeyPanFraction = 0.2;
constexpr Nanos kMinMarkerWindowNs = 100'000;

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QAbstractScrollArea(parent) {
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  viewport()->setMouseTracking(true);
  setMinimumSize(400, 200);
}

TimelineView::~TimelineView() = default;

void TimelineView::setTimeline(std::shared_ptr<const Timeline> timeline, DetailSource* source) {
  fetcher_.reset();
  window_.reset();
  requested_.reset();
  timeline_ = std::move(timeline);
  source_ = source;
  layout_state_ = {};
  selection_.reset();
  selection_flows_.clear();
  highlight_.clear();
  if (timeline_) {
    startFetcher();
    axis_.setBounds(timeline_->begin_ns, timeline_->end_ns);
  }
  relayout();
  axis_.setWidth(viewport()->width() - kGutterWidth);
  verticalScrollBar()->setValue(0);
  emit selectionChanged();
  showFocus();
}

void TimelineView::refineTimeline(std::shared_ptr<const Timeline> timeline, DetailSource* source) {
  if (!timeline_ || !timeline || timeline->tracks.size() != timeline_->tracks.size()) {
    setTimeline(std::move(timeline), source);
    return;
  }
  const int scroll = verticalScrollBar()->value();
  // A window fetched for the overview is dropped: its range may be asked for again at the finer resolution.
  fetcher_.reset();
  window_.reset();
  requested_.reset();
  timeline_ = std::move(timeline);
  source_ = source;
  startFetcher();
  relayout();
  verticalScrollBar()->setValue(scroll);
  rangeMoved();
}

void TimelineView::startFetcher() {
  fetcher_ = std::make_unique<WindowFetcher>(timeline_, [this](std::shared_ptr<const DetailWindow> window) {
    QMetaObject::invokeMethod(
        this,
        [this, window = std::move(window)] {
          if (!timeline_) return;
          window_ = window;
          viewport()->update();
          emit detailArrived();
        },
        Qt::QueuedConnection);
  });
}

QPoint TimelineView::pointAt(Nanos t, int content_y) const {
  const double x = kGutterWidth + axis_.frame().xAt(t);
  return {static_cast<int>(std::lround(x)), kRulerHeight + content_y - verticalScrollBar()->value()};
}

bool TimelineView::frameExact() const {
  if (!timeline_) return true;
  const FrameScale frame = axis_.frame();
  for (std::uint32_t t = 0; t < timeline_->tracks.size(); ++t) {
    if (&lanesForFrame(*timeline_, t, frame, window_.get()) != &timeline_->tracks[t].lanes) continue;
    for (const Lane& lane : timeline_->tracks[t].lanes) {
      if (lane.needsDetail(frame)) return false;
    }
  }
  return true;
}

void TimelineView::fitAll() {
  axis_.fitAll();
  rangeMoved();
}

void TimelineView::showFocus() {
  if (timeline_) {
    axis_.showRange(timeline_->focus.begin_ns, timeline_->focus.end_ns, 0.02);
  } else {
    axis_.fitAll();
  }
  rangeMoved();
}

void TimelineView::zoomToRange(Nanos begin_ns, Nanos end_ns) {
  axis_.showRange(begin_ns, end_ns);
  rangeMoved();
}

void TimelineView::select(std::optional<SliceRef> slice, bool reveal) {
  selection_ = slice;
  selection_flows_.clear();
  if (slice && source_ != nullptr) {
    if (auto flows = source_->flowsOf(*slice)) selection_flows_ = std::move(flows).value();
  }
  if (slice && reveal && timeline_) {
    const Slice& target = slice->slice;
    if (target.start_ns == target.end_ns) {
      // An instant has no extent of its own: zoom in around it, keeping some context.
      const Nanos half = std::max<Nanos>(kMinMarkerWindowNs, base::spanNanos(axis_.beginNs(), axis_.endNs()) / 8) / 2;
      axis_.showRange(base::saturatingSub(target.start_ns, half), base::saturatingAdd(target.start_ns, half), 0);
    } else {
      axis_.showRange(target.start_ns, target.end_ns);
    }
    revealTrack(slice->track);
    rangeMoved();
  }
  emit selectionChanged();
  viewport()->update();
}

void TimelineView::setHighlight(std::vector<bool> names) {
  highlight_ = std::move(names);
  viewport()->update();
}

void TimelineView::toggleGroup(const std::string& group) {
  if (layout_state_.collapsed_groups.erase(group) == 0) layout_state_.collapsed_groups.insert(group);
  relayout();
}

void TimelineView::toggleTrack(std::uint32_t track) {
  if (layout_state_.collapsed_tracks.erase(track) == 0) layout_state_.collapsed_tracks.insert(track);
  relayout();
}

void TimelineView::relayout() {
  layout_ = timeline_ ? std::make_unique<TrackLayout>(*timeline_, layout_state_) : nullptr;
  updateScrollRange();
  viewport()->update();
}

void TimelineView::revealTrack(std::uint32_t track) {
  if (!layout_) return;
  if (layout_->rowOfTrack(track) == nullptr && track < timeline_->tracks.size()) {
    layout_state_.collapsed_groups.erase(timeline_->tracks[track].group);
    relayout();
  }
  const LayoutRow* row = layout_->rowOfTrack(track);
  if (row == nullptr) return;
  const int visible = viewport()->height() - kRulerHeight;
  const int top = verticalScrollBar()->value();
  if (row->y < top || row->y + row->height > top + visible) {
    verticalScrollBar()->setValue(std::max(0, row->y - visible / 3));
  }
}

void TimelineView::updateScrollRange() {
  const int content = layout_ ? layout_->height() : 0;
  const int visible = std::max(0, viewport()->height() - kRulerHeight);
  verticalScrollBar()->setRange(0, std::max(0, content - visible));
  verticalScrollBar()->setPageStep(visible);
  verticalScrollBar()->setSingleStep(TrackLayout::kLaneHeight);
}

void TimelineView::rangeMoved() {
  viewport()->update();
  if (!timeline_) return;
  const Nanos begin = axis_.beginNs();
  const Nanos end = axis_.endNs();
  emit rangeChanged(begin, end);
  if (!fetcher_ || frameExact()) return;
  if (requested_ && requested_->first <= begin && end <= requested_->second) return;
  // A window three screens wide, so that panning a little is drawn from the same one.
  const Nanos span = std::max<Nanos>(1, base::spanNanos(begin, end));
  requested_ = std::make_pair(base::saturatingSub(begin, span), base::saturatingAdd(end, span));
  fetcher_->request(requested_->first, requested_->second);
}

std::optional<SliceRef> TimelineView::sliceAt(QPoint position) const {
  if (!timeline_ || position.x() < kGutterWidth || position.y() < kRulerHeight) return std::nullopt;
  return hitTest(*timeline_, *layout_, axis_, window_.get(), position.x() - kGutterWidth,
                 position.y() - kRulerHeight + verticalScrollBar()->value());
}

const GpuGap* TimelineView::gapAt(QPoint position) const {
  if (!timeline_ || position.x() < kGutterWidth || position.y() < kRulerHeight) return nullptr;
  const LayoutRow* row = layout_->rowAt(position.y() - kRulerHeight + verticalScrollBar()->value());
  if (row == nullptr || row->track < 0) return nullptr;
  const Track& track = timeline_->tracks[static_cast<std::size_t>(row->track)];
  if (!track.gpu()) return nullptr;
  const Nanos t = axis_.frame().timeAt(position.x() - kGutterWidth);
  const auto [first, last] = timeline_->gapsIn(track.store, track.device, t, t + 1);
  return first < last ? &timeline_->gaps[first] : nullptr;
}

QString TimelineView::counterTip(QPoint position) const {
  if (!timeline_ || position.x() < kGutterWidth || position.y() < kRulerHeight) return {};
  const auto hit = counterAt(*timeline_, *layout_, axis_, position.x() - kGutterWidth,
                             position.y() - kRulerHeight + verticalScrollBar()->value());
  if (!hit) return {};
  const Track& track = timeline_->tracks[hit->track];
  const std::string value = hit->value.low == hit->value.high
                                ? formatBytes(hit->value.low)
                                : fmt::format("{} to {}", formatBytes(hit->value.low), formatBytes(hit->value.high));
  return QStringLiteral("<b>%1</b><br>%2 at +%3<br>%4 (%5), highest %6")
      .arg(QString::fromStdString(track.title).toHtmlEscaped(), QString::fromStdString(value),
           QString::fromStdString(formatDuration(base::saturatingSub(hit->value.ts_ns, timeline_->begin_ns))),
           QString::fromStdString(track.series).toHtmlEscaped(), QString::fromStdString(track.group).toHtmlEscaped(),
           QString::fromStdString(formatBytes(track.counter.maxValue())));
}

void TimelineView::paintEvent(QPaintEvent* /*event*/) {
  QPainter painter(viewport());
  PaintState state;
  state.timeline = timeline_.get();
  state.layout = layout_.get();
  state.axis = &axis_;
  state.window = window_.get();
  state.size = viewport()->size();
  state.scroll_y = verticalScrollBar()->value();
  state.ruler_height = kRulerHeight;
  state.gutter_width = kGutterWidth;
  state.selection = selection_;
  state.selection_flows = &selection_flows_;
  state.highlight = &highlight_;
  paintTimeline(painter, state);
  if (!timeline_) {
    painter.setPen(QColor(90, 90, 100));
    painter.drawText(viewport()->rect(), Qt::AlignCenter, QStringLiteral("Loading…"));
  }
}

void TimelineView::resizeEvent(QResizeEvent* event) {
  QAbstractScrollArea::resizeEvent(event);
  const double old_width = axis_.width();
  const Nanos begin = axis_.beginNs();
  const Nanos end = axis_.endNs();
  axis_.setWidth(viewport()->width() - kGutterWidth);
  // Keep the same time range visible rather than the same zoom.
  if (old_width > 1) axis_.showRange(begin, end, 0);
  updateScrollRange();
  rangeMoved();
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const double notches = event->angleDelta().y() / 120.0;
  event->accept();
  if (event->modifiers() & Qt::ShiftModifier) {
    verticalScrollBar()->setValue(verticalScrollBar()->value() -
                                  static_cast<int>(notches * 3 * TrackLayout::kLaneHeight));
    viewport()->update();
    return;
  }
  const double x = event->position().x() - kGutterWidth;
  axis_.zoomAround(std::max(0.0, x), std::pow(kWheelZoomPerNotch, notches));
  rangeMoved();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  drag_origin_ = event->position().toPoint();
  drag_last_ = *drag_origin_;
  dragged_ = false;
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  if (!drag_origin_ || !(event->buttons() & Qt::LeftButton)) return;
  const QPoint position = event->position().toPoint();
  if ((position - *drag_origin_).manhattanLength() >= kDragThresholdPx) dragged_ = true;
  if (!dragged_) return;
  setCursor(Qt::ClosedHandCursor);
  axis_.panPixels(position.x() - drag_last_.x());
  verticalScrollBar()->setValue(verticalScrollBar()->value() - (position.y() - drag_last_.y()));
  drag_last_ = position;
  rangeMoved();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !drag_origin_) return;
  unsetCursor();
  const QPoint position = event->position().toPoint();
  drag_origin_.reset();
  if (dragged_) return;
  if (layout_ && position.x() < kGutterWidth && position.y() >= kRulerHeight) {
    // A click on a label collapses or expands its group or track.
    const LayoutRow* row = layout_->rowAt(position.y() - kRulerHeight + verticalScrollBar()->value());
    if (row != nullptr && row->track < 0) toggleGroup(row->label);
    if (row != nullptr && row->track >= 0 && row->collapsible) toggleTrack(static_cast<std::uint32_t>(row->track));
    return;
  }
  const auto hit = sliceAt(position);
  // Markers are tiny: clicking one also zooms to it.
  select(hit, hit && hit->slice.start_ns == hit->slice.end_ns);
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* event) {
  if (const auto hit = sliceAt(event->position().toPoint())) select(hit, true);
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
  const double centre = axis_.width() / 2;
  switch (event->key()) {
    case Qt::Key_F: fitAll(); return;
    case Qt::Key_W: axis_.zoomAround(centre, kKeyZoomFactor); break;
    case Qt::Key_S: axis_.zoomAround(centre, 1 / kKeyZoomFactor); break;
    case Qt::Key_A: axis_.panPixels(axis_.width() * kKeyPanFraction); break;
    case Qt::Key_D: axis_.panPixels(-axis_.width() * kKeyPanFraction); break;
    case Qt::Key_Escape: select(std::nullopt, false); return;
    default: QAbstractScrollArea::keyPressEvent(event); return;
  }
  rangeMoved();
}

bool TimelineView::viewportEvent(QEvent* event) {
  if (event->type() == QEvent::ToolTip && timeline_) {
    const auto* help = static_cast<QHelpEvent*>(event);
    QString text;
    if (const auto hit = sliceAt(help->pos())) {
      const Slice& slice = hit->slice;
      text = QStringLiteral("<b>%1</b><br>%2 at +%3<br>%4")
                 .arg(QString::fromStdString(timeline_->name(slice)).toHtmlEscaped(),
                      QString::fromStdString(formatDuration(slice.duration())),
                      QString::fromStdString(formatDuration(base::saturatingSub(slice.start_ns, timeline_->begin_ns))),
                      QString::fromStdString(timeline_->tracks[hit->track].title).toHtmlEscaped());
      for (const Field& field : describe(*timeline_, *hit)) {
        if (field.name == "source") text += QStringLiteral("<br>%1").arg(QString::fromStdString(field.value));
      }
    } else if (const GpuGap* gap = gapAt(help->pos())) {
      std::string line =
          fmt::format("GPU idle for {}", formatDuration(base::spanNanos(gap->gap.start_ns, gap->gap.end_ns)));
      if (gap->gap.cause != analyzer::IdleCause::kUnknown) {
        line += fmt::format(": {}", analyzer::idleCauseLabel(gap->gap.cause));
      }
      text = QString::fromStdString(line).toHtmlEscaped();
      if (!gap->host_activity.empty()) {
        text += QStringLiteral("<br>the launching thread was in %1")
                    .arg(QString::fromStdString(gap->host_activity).toHtmlEscaped());
      }
    }
    if (text.isEmpty()) text = counterTip(help->pos());
    if (text.isEmpty()) {
      QToolTip::hideText();
    } else {
      QToolTip::showText(help->globalPos(), text, this);
    }
    return true;
  }
  return QAbstractScrollArea::viewportEvent(event);
}

}  // namespace torchscope::gui
