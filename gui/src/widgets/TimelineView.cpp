#include "torchscope/gui/TimelineView.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>

#include "torchscope/gui/Details.h"
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

void TimelineView::setTimeline(std::shared_ptr<const Timeline> timeline) {
  timeline_ = std::move(timeline);
  layout_ = timeline_ ? std::make_unique<TrackLayout>(*timeline_) : nullptr;
  selection_.reset();
  highlight_.clear();
  if (timeline_) axis_.setBounds(timeline_->begin_ns, timeline_->end_ns);
  axis_.setWidth(viewport()->width() - kGutterWidth);
  axis_.fitAll();
  updateScrollRange();
  verticalScrollBar()->setValue(0);
  emit selectionChanged();
  viewport()->update();
}

QPoint TimelineView::pointAt(Nanos t, int content_y) const {
  const double x = kGutterWidth + axis_.frame().xAt(t);
  return {static_cast<int>(std::lround(x)), kRulerHeight + content_y - verticalScrollBar()->value()};
}

void TimelineView::fitAll() {
  axis_.fitAll();
  viewport()->update();
}

void TimelineView::zoomToRange(Nanos begin_ns, Nanos end_ns) {
  axis_.showRange(begin_ns, end_ns);
  viewport()->update();
}

void TimelineView::select(std::optional<SliceRef> slice, bool reveal) {
  selection_ = slice;
  if (slice && reveal && timeline_) {
    const Slice& target = timeline_->slice(*slice);
    if (target.start_ns == target.end_ns) {
      // An instant has no extent of its own: zoom in around it, keeping some context.
      const Nanos half = std::max<Nanos>(kMinMarkerWindowNs, (axis_.endNs() - axis_.beginNs()) / 8) / 2;
      axis_.showRange(target.start_ns - half, target.start_ns + half, 0);
    } else {
      axis_.showRange(target.start_ns, target.end_ns);
    }
    revealTrack(slice->track);
  }
  emit selectionChanged();
  viewport()->update();
}

void TimelineView::setHighlight(const std::string& needle) {
  highlight_ = timeline_ ? timeline_->matchingNames(needle) : std::vector<bool>{};
  viewport()->update();
}

void TimelineView::revealTrack(std::uint32_t track) {
  const LayoutRow* row = layout_ ? layout_->rowOfTrack(track) : nullptr;
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

std::optional<SliceRef> TimelineView::sliceAt(QPoint position) const {
  if (!timeline_ || position.x() < kGutterWidth || position.y() < kRulerHeight) return std::nullopt;
  return hitTest(*timeline_, *layout_, axis_, position.x() - kGutterWidth,
                 position.y() - kRulerHeight + verticalScrollBar()->value());
}

void TimelineView::paintEvent(QPaintEvent* /*event*/) {
  QPainter painter(viewport());
  PaintState state;
  state.timeline = timeline_.get();
  state.layout = layout_.get();
  state.axis = &axis_;
  state.size = viewport()->size();
  state.scroll_y = verticalScrollBar()->value();
  state.ruler_height = kRulerHeight;
  state.gutter_width = kGutterWidth;
  state.selection = selection_;
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
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const double notches = event->angleDelta().y() / 120.0;
  if (event->modifiers() & Qt::ShiftModifier) {
    verticalScrollBar()->setValue(verticalScrollBar()->value() -
                                  static_cast<int>(notches * 3 * TrackLayout::kLaneHeight));
  } else {
    const double x = event->position().x() - kGutterWidth;
    axis_.zoomAround(std::max(0.0, x), std::pow(kWheelZoomPerNotch, notches));
  }
  event->accept();
  viewport()->update();
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
  viewport()->update();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !drag_origin_) return;
  unsetCursor();
  if (!dragged_) {
    const auto hit = sliceAt(event->position().toPoint());
    // Markers are tiny: clicking one also zooms to it.
    const bool instant = hit && timeline_->slice(*hit).start_ns == timeline_->slice(*hit).end_ns;
    select(hit, instant);
  }
  drag_origin_.reset();
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
  viewport()->update();
}

bool TimelineView::viewportEvent(QEvent* event) {
  if (event->type() == QEvent::ToolTip && timeline_) {
    const auto* help = static_cast<QHelpEvent*>(event);
    const auto hit = sliceAt(help->pos());
    if (!hit) {
      QToolTip::hideText();
      return true;
    }
    const Slice& slice = timeline_->slice(*hit);
    QString text = QStringLiteral("<b>%1</b><br>%2 at +%3<br>%4")
                       .arg(QString::fromStdString(timeline_->name(slice)).toHtmlEscaped(),
                            QString::fromStdString(formatDuration(slice.end_ns - slice.start_ns)),
                            QString::fromStdString(formatDuration(slice.start_ns - timeline_->begin_ns)),
                            QString::fromStdString(timeline_->tracks[hit->track].title).toHtmlEscaped());
    for (const Field& field : describe(*timeline_, *hit)) {
      if (field.name == "source") text += QStringLiteral("<br>%1").arg(QString::fromStdString(field.value));
    }
    QToolTip::showText(help->globalPos(), text, this);
    return true;
  }
  return QAbstractScrollArea::viewportEvent(event);
}

}  // namespace torchscope::gui
