#include "torchscope/gui/FlameView.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace torchscope::gui {

namespace {

QColor flameColour(const FlameBox& box) {
  if (box.depth == 0) return QColor(200, 200, 200);
  int shade = 0;
  for (const char c : box.node->function) shade = (shade * 31 + static_cast<unsigned char>(c)) % 5;
  return box.node->user ? QColor(111 + 8 * shade, 168 + 5 * shade, 223 + 4 * shade)
                        : QColor(239 + 2 * shade, 168 + 8 * shade, 92 + 10 * shade);
}

}  // namespace

FlameView::FlameView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setBackgroundRole(QPalette::Base);
  setAutoFillBackground(true);
}

void FlameView::load(const std::string& path) {
  if (path.empty()) {
    panel_.setGraph({});
  } else {
    panel_.load(path);
  }
  setMinimumHeight(panel_.depth() * kRowHeight);
  updateGeometry();
  update();
}

QSize FlameView::sizeHint() const { return {800, std::max(1, panel_.depth()) * kRowHeight}; }

QRectF FlameView::boxRect(int box) const {
  const FlameBox& drawn = panel_.boxes().at(static_cast<std::size_t>(box));
  return {drawn.begin * width(), static_cast<double>(drawn.depth * kRowHeight), (drawn.end - drawn.begin) * width(),
          static_cast<double>(kRowHeight - 1)};
}

int FlameView::boxAt(QPoint point) const {
  if (width() <= 0 || point.y() < 0) return -1;
  return panel_.boxAt(static_cast<double>(point.x()) / width(), point.y() / kRowHeight);
}

bool FlameView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const int box = boxAt(help->pos());
    if (box < 0) {
      QToolTip::hideText();
    } else {
      QToolTip::showText(help->globalPos(), QString::fromStdString(panel_.tooltip(box)), this, boxRect(box).toRect());
    }
    return true;
  }
  return QWidget::event(event);
}

void FlameView::paintEvent(QPaintEvent* /*event*/) {
  QPainter painter(this);
  const QFontMetrics metrics(font());
  for (std::size_t i = 0; i < panel_.boxes().size(); ++i) {
    const QRectF rect = boxRect(static_cast<int>(i));
    if (rect.width() < 0.5) continue;
    painter.fillRect(rect, flameColour(panel_.boxes()[i]));
    painter.setPen(palette().color(QPalette::Base));
    painter.drawRect(rect);
    if (rect.width() < 24) continue;
    painter.setPen(Qt::black);
    const QString label = metrics.elidedText(QString::fromStdString(panel_.boxes()[i].node->function), Qt::ElideRight,
                                             static_cast<int>(rect.width()) - 6);
    painter.drawText(rect.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, label);
  }
}

void FlameView::mousePressEvent(QMouseEvent* event) {
  const int box = boxAt(event->position().toPoint());
  if (box > 0 && event->button() == Qt::LeftButton) {
    const analyzer::FlameNode& node = *panel_.boxes()[static_cast<std::size_t>(box)].node;
    if (node.user && !node.file.empty()) emit userFrameClicked(QString::fromStdString(node.file), node.line);
  }
  QWidget::mousePressEvent(event);
}

}  // namespace torchscope::gui
