// The timeline widget: tracks on one time axis with a ruler, wheel zoom around the cursor, drag
// to pan, click to select, double-click to zoom to a slice, tooltips, and highlighted search
// matches. A thin Qt layer over the Qt-free model (Viewport, TrackLayout, Lane::collect).
#pragma once

#include <QAbstractScrollArea>

#include <memory>
#include <optional>
#include <string>

#include "torchscope/gui/Viewport.h"

namespace torchscope::gui {

class TimelineView : public QAbstractScrollArea {
  Q_OBJECT

 public:
  static constexpr int kRulerHeight = 26;
  static constexpr int kGutterWidth = 260;

  explicit TimelineView(QWidget* parent = nullptr);

  void setTimeline(std::shared_ptr<const Timeline> timeline);
  [[nodiscard]] const Timeline* timeline() const { return timeline_.get(); }
  [[nodiscard]] const Viewport& timeAxis() const { return axis_; }
  [[nodiscard]] const TrackLayout* layout() const { return layout_.get(); }
  [[nodiscard]] std::optional<SliceRef> selection() const { return selection_; }
  // Widget position of a time and content y (for tests and scripted input).
  [[nodiscard]] QPoint pointAt(Nanos t, int content_y) const;

  void fitAll();
  void zoomToRange(Nanos begin_ns, Nanos end_ns);
  // Selects a slice (or clears the selection); with `reveal`, zooms to it and scrolls its track into view.
  void select(std::optional<SliceRef> slice, bool reveal);
  // Outlines every slice whose label contains `needle`; "" clears.
  void setHighlight(const std::string& needle);

 signals:
  void selectionChanged();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  bool viewportEvent(QEvent* event) override;

 private:
  [[nodiscard]] std::optional<SliceRef> sliceAt(QPoint position) const;
  void revealTrack(std::uint32_t track);
  void updateScrollRange();

  std::shared_ptr<const Timeline> timeline_;
  std::unique_ptr<TrackLayout> layout_;
  Viewport axis_;
  std::optional<SliceRef> selection_;
  std::vector<bool> highlight_;
  std::optional<QPoint> drag_origin_;
  QPoint drag_last_;
  bool dragged_ = false;
};

}  // namespace torchscope::gui
