// Paints one frame of the timeline with QPainter: ruler, group headers, track labels and, per
// lane, only the items Lane::collect() returns for the frame (so a frame costs O(pixels) however
// many slices the run has). Used by TimelineView and by the paint benchmark on a QImage.
#pragma once

#include <QPainter>
#include <QSize>

#include <optional>
#include <vector>

#include "torchscope/gui/Viewport.h"

namespace torchscope::gui {

struct PaintState {
  const Timeline* timeline = nullptr;
  const TrackLayout* layout = nullptr;
  const Viewport* axis = nullptr;
  QSize size;
  int scroll_y = 0;
  int ruler_height = 26;
  int gutter_width = 260;
  std::optional<SliceRef> selection;
  const std::vector<bool>* highlight = nullptr;  // by name id; null or empty for none
};

struct PaintStats {
  std::size_t items = 0;  // rectangles and markers drawn
  std::size_t lanes = 0;  // lanes visited
};

PaintStats paintTimeline(QPainter& painter, const PaintState& state);

}  // namespace torchscope::gui
