#include "torchscope/gui/TimelinePainter.h"

#include <QFontMetrics>
#include <QPolygonF>

#include <algorithm>
#include <cmath>

#include "torchscope/gui/Text.h"

namespace torchscope::gui {

namespace {

constexpr double kMinLabelWidthPx = 36;
constexpr double kMarkerHalfWidth = 5;
const QColor kBackground(250, 250, 252);
const QColor kAlternateBackground(243, 244, 247);
const QColor kGroupBackground(222, 226, 234);
const QColor kGridLine(0, 0, 0, 22);
const QColor kHighlight(255, 196, 0);
const QColor kGraphBreakColour(230, 90, 40);
const QColor kRecompileColour(140, 70, 200);

QColor colourOf(std::uint32_t rgb, float fill) {
  QColor colour(static_cast<int>((rgb >> 16) & 0xFF), static_cast<int>((rgb >> 8) & 0xFF),
                static_cast<int>(rgb & 0xFF));
  // Folded items are as opaque as they are busy, so sparse regions look sparse.
  colour.setAlphaF(0.35F + 0.65F * std::clamp(fill, 0.0F, 1.0F));
  return colour;
}

// A name's colour, computed once per name and frame.
class Palette {
 public:
  explicit Palette(const Timeline& timeline) : timeline_(timeline), colours_(timeline.names.size(), kUnset) {}
  std::uint32_t operator()(std::uint32_t name) {
    if (colours_[name] == kUnset) colours_[name] = colourForName(timeline_.names[name]);
    return colours_[name];
  }

 private:
  static constexpr std::uint32_t kUnset = 0xFFFFFFFFU;
  const Timeline& timeline_;
  std::vector<std::uint32_t> colours_;
};

void paintRuler(QPainter& painter, const PaintState& state, const QRectF& content) {
  painter.fillRect(QRectF(0, 0, state.size.width(), state.ruler_height), kGroupBackground);
  painter.setPen(QColor(60, 60, 70));
  const auto ticks = rulerTicks(*state.axis, state.timeline->begin_ns, 110);
  for (const Tick& tick : ticks) {
    const double x = content.left() + tick.x;
    if (x < content.left() || x > content.right()) continue;
    painter.setPen(QColor(60, 60, 70));
    painter.drawLine(QPointF(x, state.ruler_height - 8), QPointF(x, state.ruler_height));
    painter.drawText(QPointF(x + 3, state.ruler_height - 10), QString::fromStdString(tick.label));
    painter.setPen(kGridLine);
    painter.drawLine(QPointF(x, content.top()), QPointF(x, content.bottom()));
  }
  painter.setPen(QColor(60, 60, 70));
  const QString span = QString::fromStdString(formatDuration(state.axis->endNs() - state.axis->beginNs()));
  painter.drawText(QRectF(4, 0, state.gutter_width - 8, state.ruler_height), Qt::AlignVCenter | Qt::AlignLeft,
                   QStringLiteral("visible: ") + span);
}

void paintMarker(QPainter& painter, double x, double top, RecordKind kind) {
  const double bottom = top + TrackLayout::kLaneHeight - 3;
  const QPolygonF triangle({QPointF(x - kMarkerHalfWidth, top + 1), QPointF(x + kMarkerHalfWidth, top + 1),
                            QPointF(x, bottom)});
  painter.setPen(Qt::NoPen);
  painter.setBrush(kind == RecordKind::kGraphBreak ? kGraphBreakColour : kRecompileColour);
  painter.drawPolygon(triangle);
}

PaintStats paintLanes(QPainter& painter, const PaintState& state, const QRectF& content, const Track& track,
                      const LayoutRow& row, Palette& palette) {
  PaintStats stats;
  const FrameScale frame = state.axis->frame();
  const QFontMetrics metrics = painter.fontMetrics();
  std::vector<DrawItem> items;
  const bool highlighting = state.highlight != nullptr && !state.highlight->empty();
  for (std::size_t l = 0; l < track.lanes.size(); ++l) {
    const Lane& lane = track.lanes[l];
    const double top = content.top() + TrackLayout::laneTop(row, static_cast<std::uint32_t>(l)) - state.scroll_y;
    if (top > content.bottom() || top + TrackLayout::kLaneHeight < content.top()) continue;
    items.clear();
    lane.collect(frame, items);
    ++stats.lanes;
    stats.items += items.size();
    for (const DrawItem& item : items) {
      const Slice& slice = lane.slices()[item.representative];
      const double x0 = content.left() + std::max(item.x0, -2.0);
      if (track.markers()) {
        paintMarker(painter, content.left() + item.x0, top, slice.kind);
        continue;
      }
      const double x1 = content.left() + std::min(item.x1, frame.width_px + 2);
      const QRectF rect(x0, top + 1, std::max(1.0, x1 - x0), TrackLayout::kLaneHeight - 2);
      painter.fillRect(rect, colourOf(palette(slice.name), item.fill));
      if (highlighting && (*state.highlight)[slice.name]) {
        painter.setPen(QPen(kHighlight, 2));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(rect.adjusted(-1, -1, 1, 1));
      }
      if (rect.width() >= kMinLabelWidthPx && item.count == 1) {
        painter.setPen(QColor(20, 20, 25));
        const QString text = metrics.elidedText(QString::fromStdString(state.timeline->name(slice)), Qt::ElideRight,
                                                static_cast<int>(rect.width()) - 6);
        painter.drawText(rect.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
      }
    }
  }
  return stats;
}

void paintSelection(QPainter& painter, const PaintState& state, const QRectF& content) {
  if (!state.selection) return;
  const SliceRef& ref = *state.selection;
  const LayoutRow* row = state.layout->rowOfTrack(ref.track);
  if (row == nullptr) return;
  const Slice& slice = state.timeline->slice(ref);
  const FrameScale frame = state.axis->frame();
  const double top = content.top() + TrackLayout::laneTop(*row, ref.lane) - state.scroll_y;
  double x0 = content.left() + frame.xAt(slice.start_ns);
  double x1 = content.left() + frame.xAt(slice.end_ns);
  if (slice.start_ns == slice.end_ns) {
    x0 -= kMarkerHalfWidth;
    x1 += kMarkerHalfWidth;
  }
  x0 = std::max(x0, content.left() - 3);
  x1 = std::min(x1, content.right() + 3);
  painter.setPen(QPen(QColor(10, 10, 10), 2));
  painter.setBrush(Qt::NoBrush);
  painter.drawRect(QRectF(x0 - 1, top, std::max(2.0, x1 - x0 + 2), TrackLayout::kLaneHeight));
}

void paintGutter(QPainter& painter, const PaintState& state, const QRectF& content) {
  const QFontMetrics metrics = painter.fontMetrics();
  for (const LayoutRow& row : state.layout->rows()) {
    const double top = content.top() + row.y - state.scroll_y;
    if (top > content.bottom()) break;
    if (top + row.height < content.top()) continue;
    const QRectF label(0, top, state.gutter_width, row.height);
    const bool group = row.track < 0;
    painter.fillRect(label, group ? kGroupBackground : QColor(235, 237, 242));
    QFont font = painter.font();
    font.setBold(group);
    painter.setFont(font);
    painter.setPen(QColor(30, 30, 40));
    const QString text = QString::fromStdString(row.label);
    painter.drawText(label.adjusted(group ? 6 : 14, 0, -4, 0), Qt::AlignVCenter | Qt::AlignLeft,
                     metrics.elidedText(text, Qt::ElideMiddle, state.gutter_width - 20));
    font.setBold(false);
    painter.setFont(font);
  }
  painter.setPen(QColor(180, 184, 194));
  painter.drawLine(QPointF(state.gutter_width, content.top()), QPointF(state.gutter_width, content.bottom()));
}

}  // namespace

PaintStats paintTimeline(QPainter& painter, const PaintState& state) {
  PaintStats stats;
  painter.fillRect(QRect(QPoint(0, 0), state.size), kBackground);
  if (state.timeline == nullptr || state.layout == nullptr || state.axis == nullptr) return stats;
  const QRectF content(state.gutter_width, state.ruler_height, state.size.width() - state.gutter_width,
                       state.size.height() - state.ruler_height);
  Palette palette(*state.timeline);

  painter.save();
  painter.setClipRect(content);
  for (const LayoutRow& row : state.layout->rows()) {
    const double top = content.top() + row.y - state.scroll_y;
    if (top > content.bottom()) break;
    if (top + row.height < content.top()) continue;
    const QRectF band(content.left(), top, content.width(), row.height);
    if (row.track < 0) {
      painter.fillRect(band, kGroupBackground);
      continue;
    }
    painter.fillRect(band, row.track % 2 == 0 ? kBackground : kAlternateBackground);
    const Track& track = state.timeline->tracks[static_cast<std::size_t>(row.track)];
    const PaintStats lanes = paintLanes(painter, state, content, track, row, palette);
    stats.items += lanes.items;
    stats.lanes += lanes.lanes;
  }
  paintSelection(painter, state, content);
  painter.restore();

  paintRuler(painter, state, content);
  paintGutter(painter, state, content);
  return stats;
}

}  // namespace torchscope::gui
