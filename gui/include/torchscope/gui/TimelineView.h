// The timeline widget: tracks on one time axis with a ruler, wheel zoom around the cursor, drag
// to pan, click to select, double-click to zoom to a slice, a click on a group or track label to
// collapse or expand it, tooltips (a memory counter's value at the cursor among them), flow arrows,
// the GPUs' idle gaps and highlighted search matches.
// A thin Qt layer over the Qt-free model (Viewport, TrackLayout, Lane::collect, DetailSource).
#pragma once

#include <QAbstractScrollArea>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "torchscope/gui/Layout.h"

namespace torchscope::gui {

class WindowFetcher;

class TimelineView : public QAbstractScrollArea {
  Q_OBJECT

 public:
  static constexpr int kRulerHeight = 26;
  static constexpr int kGutterWidth = 260;

  explicit TimelineView(QWidget* parent = nullptr);
  ~TimelineView() override;
  TimelineView(const TimelineView&) = delete;
  TimelineView& operator=(const TimelineView&) = delete;

  // Shows a timeline; `source` answers the selection's flows (may be null: no flows).
  void setTimeline(std::shared_ptr<const Timeline> timeline, DetailSource* source);
  // Replaces an overview by the full model of the same stores (same tracks, same lanes), keeping
  // the visible range, the scroll position, folded groups, the selection and the highlight.
  void refineTimeline(std::shared_ptr<const Timeline> timeline, DetailSource* source);
  [[nodiscard]] const Timeline* timeline() const { return timeline_.get(); }
  [[nodiscard]] const Viewport& timeAxis() const { return axis_; }
  [[nodiscard]] const TrackLayout* layout() const { return layout_.get(); }
  [[nodiscard]] const DetailWindow* detailWindow() const { return window_.get(); }
  [[nodiscard]] std::optional<SliceRef> selection() const { return selection_; }
  [[nodiscard]] const std::vector<Flow>& selectionFlows() const { return selection_flows_; }
  // Widget position of a time and content y (for tests and scripted input).
  [[nodiscard]] QPoint pointAt(Nanos t, int content_y) const;
  // True when every visible lane is drawn from exact slices (no detail fetch outstanding).
  [[nodiscard]] bool frameExact() const;

  void fitAll();
  // Shows what the timeline chose to frame first (the GPUs' work, else the whole run).
  void showFocus();
  void zoomToRange(Nanos begin_ns, Nanos end_ns);
  // Selects a slice (or clears the selection); with `reveal`, zooms to it and scrolls its track into view.
  void select(std::optional<SliceRef> slice, bool reveal);
  // Outlines every slice whose name is set in the mask (over Timeline::names); empty clears.
  void setHighlight(std::vector<bool> names);
  // Collapses or expands a group (by label) or a track's nested lanes.
  void toggleGroup(const std::string& group);
  void toggleTrack(std::uint32_t track);
  // Expands the track's group if collapsed and scrolls the track into view.
  void revealTrack(std::uint32_t track);

 signals:
  void selectionChanged();
  // The visible time range changed (zoom, pan, resize, a new timeline).
  void rangeChanged(Nanos begin_ns, Nanos end_ns);
  // A detail window arrived and was drawn.
  void detailArrived();

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
  [[nodiscard]] const GpuGap* gapAt(QPoint position) const;
  // A tooltip for the counter band under the position: the series' value there; empty if none.
  [[nodiscard]] QString counterTip(QPoint position) const;
  // A fetch thread for the current timeline's detail windows.
  void startFetcher();
  void relayout();
  void updateScrollRange();
  // After every change of the visible range: asks for a detail window when the frame needs one.
  void rangeMoved();

  std::shared_ptr<const Timeline> timeline_;
  DetailSource* source_ = nullptr;
  std::unique_ptr<WindowFetcher> fetcher_;
  std::shared_ptr<const DetailWindow> window_;
  std::optional<std::pair<Nanos, Nanos>> requested_;
  LayoutState layout_state_;
  std::unique_ptr<TrackLayout> layout_;
  Viewport axis_;
  std::optional<SliceRef> selection_;
  std::vector<Flow> selection_flows_;
  std::vector<bool> highlight_;
  std::optional<QPoint> drag_origin_;
  QPoint drag_last_;
  bool dragged_ = false;
};

}  // namespace torchscope::gui
