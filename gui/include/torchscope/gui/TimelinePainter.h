// Paints one frame of the timeline with QPainter: ruler, group headers, track labels, the GPUs'
// idle gaps shaded by cause, per lane only the items Lane::collect() returns for the frame (so a
// frame costs O(pixels) however many slices the run has), memory counters as filled step bands
// from CounterLane::collect(), and flow arrows. Used by TimelineView and
// by the benchmarks and screenshot tests on a QImage.
#pragma once

#include <QPainter>
#include <QSize>

#include <optional>
#include <vector>

#include "torchscope/gui/Layout.h"

namespace torchscope::gui {

struct PaintState {
  const Timeline* timeline = nullptr;
  const TrackLayout* layout = nullptr;
  const Viewport* axis = nullptr;
  // Exact slices and flows of a range, for lanes summarised coarser than the frame; null: summaries.
  const DetailWindow* window = nullptr;
  QSize size;
  int scroll_y = 0;
  int ruler_height = 26;
  int gutter_width = 260;
  std::optional<SliceRef> selection;
  const std::vector<Flow>* selection_flows = nullptr;  // drawn bold
  const std::vector<bool>* highlight = nullptr;        // by name id; null or empty for none
};

struct PaintStats {
  std::size_t items = 0;  // rectangles and markers drawn
  std::size_t lanes = 0;  // lanes visited
  std::size_t flows = 0;  // arrows drawn
  std::size_t gaps = 0;   // idle gaps shaded
};

PaintStats paintTimeline(QPainter& painter, const PaintState& state);


}  // namespace torchscope::gui
