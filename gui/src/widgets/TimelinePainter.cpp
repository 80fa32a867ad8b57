#include "torchscope/gui/TimelinePainter.h"

#include <fmt/format.h>

#include <QFontMetrics>
#include <QPainterPath>
#include <QPolygonF>

#include <algorithm>
#include <cmath>

#include "torchscope/base/Saturating.h"
#include "torchscope/gui/Text.h"

namespace torchscope::gui {

namespace {

constexpr double kMinLabelWidthPx = 36;
constexpr double kMinGapLabelWidthPx = 90;
constexpr double kMarkerHalfWidth = 5;
constexpr double kArrowHeadPx = 6;
const QColor kBackground(250, 250, 252);
const QColor kAlternateBackground(243, 244, 247);
const QColor kGroupBackground(222, 226, 234);
const QColor kGridLine(0, 0, 0, 22);
const QColor kHighlight(255, 196, 0);
const QColor kGraphBreakColour(230, 90, 40);
const QColor kRecompileColour(140, 70, 200);
const QColor kLaunchFlowColour(40, 90, 200, 110);
const QColor kSyncFlowColour(200, 40, 40, 140);

QColor colourOf(std::uint32_t rgb, float fill) {
  QColor colour(static_cast<int>((rgb >> 16) & 0xFF), static_cast<int>((rgb >> 8) & 0xFF),
                static_cast<int>(rgb & 0xFF));
  // Folded items are as opaque as they are busy, so sparse regions look sparse.
  colour.setAlphaF(0.35F + 0.65F * std::clamp(fill, 0.0F, 1.0F));
  return colour;
}

// Idle gaps: the host was late (orange), the work was queued and waited on the GPU side (blue),
// or the cause is not known (grey).
QColor gapColour(analyzer::IdleCause cause) {
  switch (cause) {
    case analyzer::IdleCause::kHostLate: return {255, 150, 40, 60};
    case analyzer::IdleCause::kQueued: return {60, 120, 230, 50};
    case analyzer::IdleCause::kUnknown: break;
  }
  return {120, 120, 130, 40};
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

// Content-space to widget-space for one frame.
struct Frame {
  const PaintState& state;
  QRectF content;
  FrameScale scale;

  [[nodiscard]] double x(Nanos t) const { return content.left() + scale.xAt(t); }
  [[nodiscard]] double y(int content_y) const { return content.top() + content_y - state.scroll_y; }
  [[nodiscard]] bool visible(double top, double height) const {
    return top <= content.bottom() && top + height >= content.top();
  }
};

void paintRuler(QPainter& painter, const Frame& frame) {
  const PaintState& state = frame.state;
  painter.fillRect(QRectF(0, 0, state.size.width(), state.ruler_height), kGroupBackground);
  const auto ticks = rulerTicks(*state.axis, state.timeline->begin_ns, 110);
  for (const Tick& tick : ticks) {
    const double x = frame.content.left() + tick.x;
    if (x < frame.content.left() || x > frame.content.right()) continue;
    painter.setPen(QColor(60, 60, 70));
    painter.drawLine(QPointF(x, state.ruler_height - 8), QPointF(x, state.ruler_height));
    painter.drawText(QPointF(x + 3, state.ruler_height - 10), QString::fromStdString(tick.label));
    painter.setPen(kGridLine);
    painter.drawLine(QPointF(x, frame.content.top()), QPointF(x, frame.content.bottom()));
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

PaintStats paintLane(QPainter& painter, const Frame& frame, const Track& track, const Lane& lane, double top,
                     Palette& palette, std::vector<DrawItem>& items) {
  PaintStats stats;
  const PaintState& state = frame.state;
  const QFontMetrics metrics = painter.fontMetrics();
  const bool highlighting = state.highlight != nullptr && !state.highlight->empty();
  items.clear();
  lane.collect(frame.scale, items);
  stats.lanes = 1;
  stats.items = items.size();
  for (const DrawItem& item : items) {
    const Slice& slice = *item.representative;
    if (track.markers()) {
      paintMarker(painter, frame.content.left() + item.x0, top, slice.kind);
      continue;
    }
    const double x0 = frame.content.left() + std::max(item.x0, -2.0);
    const double x1 = frame.content.left() + std::min(item.x1, frame.scale.width_px + 2);
    const QRectF rect(x0, top + 1, std::max(1.0, x1 - x0), TrackLayout::kLaneHeight - 2);
    painter.fillRect(rect, colourOf(palette(slice.name), item.fill));
    if (highlighting && slice.name < state.highlight->size() && (*state.highlight)[slice.name]) {
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
  return stats;
}

// Shades a GPU track's idle gaps wider than a pixel, labelled with their cause where there is room.
std::size_t paintGaps(QPainter& painter, const Frame& frame, const Track& track, double top, double height) {
  const Timeline& timeline = *frame.state.timeline;
  const auto [first, last] = timeline.gapsIn(track.store, track.device, frame.scale.begin_ns, frame.scale.endNs());
  std::size_t shaded = 0;
  const QFontMetrics metrics = painter.fontMetrics();
  for (std::size_t i = first; i < last; ++i) {
    const GpuGap& gap = timeline.gaps[i];
    const double x0 = std::max(frame.content.left(), frame.x(gap.gap.start_ns));
    const double x1 = std::min(frame.content.right(), frame.x(gap.gap.end_ns));
    if (x1 - x0 < 1) continue;
    ++shaded;
    const QRectF rect(x0, top, x1 - x0, height);
    painter.fillRect(rect, gapColour(gap.gap.cause));
    if (rect.width() < kMinGapLabelWidthPx) continue;
    std::string label = fmt::format("idle {}", formatDuration(base::spanNanos(gap.gap.start_ns, gap.gap.end_ns)));
    if (gap.gap.cause != analyzer::IdleCause::kUnknown) label += fmt::format(" · {}", analyzer::idleCauseLabel(gap.gap.cause));
    if (!gap.host_activity.empty()) label += fmt::format(": {}", gap.host_activity);
    painter.setPen(QColor(90, 70, 40));
    painter.drawText(rect.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft,
                     metrics.elidedText(QString::fromStdString(label), Qt::ElideRight, static_cast<int>(rect.width()) - 6));
  }
  return shaded;
}

// Memory series: host RSS teal, a GPU's allocated bytes blue and reserved violet.
QColor counterColour(std::string_view series) {
  if (series.ends_with(".reserved")) return {126, 87, 194};
  if (series.starts_with("cuda.")) return {30, 136, 229};
  return {0, 137, 123};
}

// A counter track as a filled step band from zero to the lane's highest value: solid up to the
// lowest value a span held, lighter up to its highest, with the scale written in the band.
PaintStats paintCounter(QPainter& painter, const Frame& frame, const Track& track, double top, int height) {
  const CounterLane& lane = track.counter;
  std::vector<CounterSpan> spans;
  lane.collect(frame.scale, spans);
  const double scale = static_cast<double>(std::max<std::int64_t>(1, lane.maxValue()));
  const double bottom = top + height - 1;
  const double usable = height - 3;
  const auto yOf = [&](std::int64_t value) {
    return bottom - usable * std::clamp(static_cast<double>(value) / scale, 0.0, 1.0);
  };
  QColor solid = counterColour(track.series);
  QColor light = solid;
  solid.setAlpha(190);
  light.setAlpha(80);
  for (const CounterSpan& span : spans) {
    if (span.x1 < -2 || span.x0 > frame.scale.width_px + 2) continue;
    const double x0 = frame.content.left() + std::max(span.x0, -2.0);
    const double x1 = frame.content.left() + std::min(span.x1, frame.scale.width_px + 2);
    const double width = std::max(1.0, x1 - x0);
    const double low = yOf(span.low);
    painter.fillRect(QRectF(x0, low, width, bottom - low), solid);
    if (span.high > span.low) painter.fillRect(QRectF(x0, yOf(span.high), width, low - yOf(span.high)), light);
  }
  if (height >= TrackLayout::kCounterHeight) {
    painter.setPen(QColor(40, 40, 50));
    painter.drawText(QRectF(frame.content.left() + 4, top + 1, frame.content.width() - 8, TrackLayout::kLaneHeight - 4),
                     Qt::AlignTop | Qt::AlignLeft,
                     QString::fromStdString(fmt::format("max {}", formatBytes(lane.maxValue()))));
  }
  PaintStats stats;
  stats.items = spans.size();
  stats.lanes = 1;
  return stats;
}

PaintStats paintTrack(QPainter& painter, const Frame& frame, std::uint32_t index, Palette& palette,
                      std::vector<DrawItem>& items) {
  PaintStats stats;
  const PaintState& state = frame.state;
  const Track& track = state.timeline->tracks[index];
  if (track.isCounter()) {
    const auto lane_y = state.layout->laneY(index, 0);
    // On its own row the band is taller than on a collapsed group's header.
    const bool own_row = state.layout->rowOfTrack(index) != nullptr;
    const int height = own_row ? TrackLayout::kCounterHeight : TrackLayout::kLaneHeight;
    if (!lane_y || !frame.visible(frame.y(*lane_y), height)) return stats;
    return paintCounter(painter, frame, track, frame.y(*lane_y), height);
  }
  const auto& lanes = lanesForFrame(*state.timeline, index, frame.scale, state.window);
  for (std::uint32_t l = 0; l < lanes.size(); ++l) {
    const auto lane_y = state.layout->laneY(index, l);
    if (!lane_y) continue;
    const double top = frame.y(*lane_y);
    if (!frame.visible(top, TrackLayout::kLaneHeight)) continue;
    if (track.gpu() && l == 0) stats.gaps += paintGaps(painter, frame, track, top, TrackLayout::kLaneHeight);
    const PaintStats lane = paintLane(painter, frame, track, lanes[l], top, palette, items);
    stats.items += lane.items;
    stats.lanes += lane.lanes;
  }
  return stats;
}

// An arrow from the end `from` to the end `to`, at the middle of their lanes; hidden ends are skipped.
bool paintFlow(QPainter& painter, const Frame& frame, const Flow& flow, bool bold) {
  const auto from_y = frame.state.layout->laneY(flow.from.track, flow.from.lane);
  const auto to_y = frame.state.layout->laneY(flow.to.track, flow.to.lane);
  if (!from_y || !to_y) return false;
  const QPointF from(frame.x(flow.from.time_ns), frame.y(*from_y) + TrackLayout::kLaneHeight / 2.0);
  const QPointF to(frame.x(flow.to.time_ns), frame.y(*to_y) + TrackLayout::kLaneHeight / 2.0);
  if (std::max(from.x(), to.x()) < frame.content.left() || std::min(from.x(), to.x()) > frame.content.right()) {
    return false;
  }
  QColor colour = flow.kind == FlowKind::kSync ? kSyncFlowColour : kLaunchFlowColour;
  if (bold) colour.setAlpha(255);
  painter.setPen(QPen(colour, bold ? 2 : 1));
  QPainterPath path(from);
  const double bend = (to.y() - from.y()) / 2;
  path.cubicTo(from + QPointF(0, bend), to - QPointF(0, bend), to);
  painter.setBrush(Qt::NoBrush);
  painter.drawPath(path);
  const double direction = to.y() >= from.y() ? -1 : 1;
  painter.setBrush(colour);
  painter.setPen(Qt::NoPen);
  painter.drawPolygon(QPolygonF({to, to + QPointF(-kArrowHeadPx / 2, direction * kArrowHeadPx),
                                 to + QPointF(kArrowHeadPx / 2, direction * kArrowHeadPx)}));
  return true;
}

std::size_t paintFlows(QPainter& painter, const Frame& frame) {
  const PaintState& state = frame.state;
  std::size_t drawn = 0;
  painter.setRenderHint(QPainter::Antialiasing, true);
  if (state.window != nullptr && state.window->covers(frame.scale.begin_ns, frame.scale.endNs())) {
    for (const Flow& flow : state.window->flows) drawn += paintFlow(painter, frame, flow, false) ? 1 : 0;
  }
  if (state.selection_flows != nullptr) {
    for (const Flow& flow : *state.selection_flows) drawn += paintFlow(painter, frame, flow, true) ? 1 : 0;
  }
  painter.setRenderHint(QPainter::Antialiasing, false);
  return drawn;
}

void paintSelection(QPainter& painter, const Frame& frame) {
  if (!frame.state.selection) return;
  const SliceRef& ref = *frame.state.selection;
  const auto lane_y = frame.state.layout->laneY(ref.track, ref.lane);
  if (!lane_y) return;
  const Slice& slice = ref.slice;
  const double top = frame.y(*lane_y);
  double x0 = frame.x(slice.start_ns);
  double x1 = frame.x(slice.end_ns);
  if (slice.start_ns == slice.end_ns) {
    x0 -= kMarkerHalfWidth;
    x1 += kMarkerHalfWidth;
  }
  x0 = std::max(x0, frame.content.left() - 3);
  x1 = std::min(x1, frame.content.right() + 3);
  painter.setPen(QPen(QColor(10, 10, 10), 2));
  painter.setBrush(Qt::NoBrush);
  painter.drawRect(QRectF(x0 - 1, top, std::max(2.0, x1 - x0 + 2), TrackLayout::kLaneHeight));
}

void paintGutter(QPainter& painter, const Frame& frame) {
  const PaintState& state = frame.state;
  const QFontMetrics metrics = painter.fontMetrics();
  for (const LayoutRow& row : state.layout->rows()) {
    const double top = frame.y(row.y);
    if (top > frame.content.bottom()) break;
    if (top + row.height < frame.content.top()) continue;
    const QRectF label(0, top, state.gutter_width, row.height);
    const bool group = row.track < 0;
    painter.fillRect(label, group ? kGroupBackground : QColor(235, 237, 242));
    QFont font = painter.font();
    font.setBold(group);
    painter.setFont(font);
    painter.setPen(QColor(30, 30, 40));
    // ▸ collapsed, ▾ expanded: a click on the row toggles it.
    const QString toggle = row.collapsible ? (row.collapsed ? QStringLiteral("▸ ") : QStringLiteral("▾ ")) : QString();
    const QString text = toggle + QString::fromStdString(row.label);
    const QRectF text_rect = label.adjusted(group ? 4 : 12, 0, -4, 0);
    painter.drawText(group ? text_rect : QRectF(text_rect.left(), top, text_rect.width(), TrackLayout::kLaneHeight + 4),
                     Qt::AlignVCenter | Qt::AlignLeft,
                     metrics.elidedText(text, Qt::ElideMiddle, state.gutter_width - 20));
    font.setBold(false);
    painter.setFont(font);
  }
  painter.setPen(QColor(180, 184, 194));
  painter.drawLine(QPointF(state.gutter_width, frame.content.top()),
                   QPointF(state.gutter_width, frame.content.bottom()));
}

}  // namespace

PaintStats paintTimeline(QPainter& painter, const PaintState& state) {
  PaintStats stats;
  painter.fillRect(QRect(QPoint(0, 0), state.size), kBackground);
  if (state.timeline == nullptr || state.layout == nullptr || state.axis == nullptr) return stats;
  const Frame frame{state,
                    QRectF(state.gutter_width, state.ruler_height, state.size.width() - state.gutter_width,
                           state.size.height() - state.ruler_height),
                    state.axis->frame()};
  Palette palette(*state.timeline);
  std::vector<DrawItem> items;

  painter.save();
  painter.setClipRect(frame.content);
  const auto add = [&stats](const PaintStats& more) {
    stats.items += more.items;
    stats.lanes += more.lanes;
    stats.gaps += more.gaps;
  };
  for (const LayoutRow& row : state.layout->rows()) {
    const double top = frame.y(row.y);
    if (top > frame.content.bottom()) break;
    if (top + row.height < frame.content.top()) continue;
    const QRectF band(frame.content.left(), top, frame.content.width(), row.height);
    if (row.track < 0) {
      painter.fillRect(band, kGroupBackground);
      // A collapsed group shows the outermost lane of each of its tracks on its header.
      if (row.collapsed) {
        for (const std::uint32_t track : row.tracks) add(paintTrack(painter, frame, track, palette, items));
      }
      continue;
    }
    painter.fillRect(band, row.track % 2 == 0 ? kBackground : kAlternateBackground);
    add(paintTrack(painter, frame, static_cast<std::uint32_t>(row.track), palette, items));
  }
  stats.flows = paintFlows(painter, frame);
  paintSelection(painter, frame);
  painter.restore();

  paintRuler(painter, frame);
  paintGutter(painter, frame);
  return stats;
}

}  // namespace torchscope::gui
