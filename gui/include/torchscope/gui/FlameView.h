// The "Flame graph" tab's drawing: FlamePanel's boxes as rectangles, one 18-pixel row per depth, widths by time;
// the user's frames blue, torch's and the libraries' orange. Hovering a box shows its tooltip; clicking a frame
// of the user's code emits userFrameClicked with its file and line (the window shows that line).
#pragma once

#include <QWidget>

#include <cstdint>
#include <string>

#include "torchscope/gui/FlamePanel.h"

namespace torchscope::gui {

class FlameView : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kRowHeight = 18;

  explicit FlameView(QWidget* parent = nullptr);

  // Reads the tree of the store at `path`; an empty path forgets it.
  void load(const std::string& path);
  [[nodiscard]] const FlamePanel& panel() const { return panel_; }
  // The box under a point of the widget, -1 for none.
  [[nodiscard]] int boxAt(QPoint point) const;
  // The rectangle a box is drawn in.
  [[nodiscard]] QRectF boxRect(int box) const;

  [[nodiscard]] QSize sizeHint() const override;

 signals:
  void userFrameClicked(const QString& file, qint64 line);

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  FlamePanel panel_;
};

}  // namespace torchscope::gui
