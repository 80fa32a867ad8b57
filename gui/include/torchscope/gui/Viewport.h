// Zoom, pan and layout maths of the timeline view, and pixel -> slice hit testing. Qt-free.
//
// Error contract: nothing fails; zoom is clamped to [kMinNsPerPixel, the whole timeline in a
// quarter of the width], and pan keeps part of the timeline on screen.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "torchscope/gui/Timeline.h"

namespace torchscope::gui {

class Viewport {
 public:
  static constexpr double kMinNsPerPixel = 0.01;

  // The timeline extent that zooming and panning are clamped to.
  void setBounds(Nanos begin_ns, Nanos end_ns);
  void setWidth(double width_px);
  // Shows the whole timeline with a small margin.
  void fitAll();
  // Shows [begin_ns, end_ns] with `margin` of its length on each side.
  void showRange(Nanos begin_ns, Nanos end_ns, double margin = 0.1);
  // factor < 1 zooms in; the time under x stays under x.
  void zoomAround(double x, double factor);
  // Moves the content right by dx pixels (the visible times move left).
  void panPixels(double dx);

  [[nodiscard]] FrameScale frame() const { return {begin_ns_, ns_per_px_, width_px_}; }
  [[nodiscard]] Nanos beginNs() const { return begin_ns_; }
  [[nodiscard]] Nanos endNs() const { return frame().endNs(); }
  [[nodiscard]] double nsPerPixel() const { return ns_per_px_; }
  [[nodiscard]] double width() const { return width_px_; }

 private:
  void clamp();

  Nanos bounds_begin_ns_ = 0;
  Nanos bounds_end_ns_ = 1;
  Nanos begin_ns_ = 0;
  double ns_per_px_ = 1;
  double width_px_ = 1;
};

// A labelled time-ruler tick at x, labelled relative to the timeline's start ("1.50 ms").
struct Tick {
  double x = 0;
  std::string label;
};
// Ticks on a 1-2-5 series at least min_spacing_px apart.
[[nodiscard]] std::vector<Tick> rulerTicks(const Viewport& viewport, Nanos origin_ns, double min_spacing_px);

// Vertical arrangement: a header row per group, then each track's lanes.
struct LayoutRow {
  int y = 0;
  int height = 0;
  int track = -1;  // -1 for a group header
  std::string label;
};

class TrackLayout {
 public:
  static constexpr int kLaneHeight = 18;
  static constexpr int kGroupHeight = 22;
  static constexpr int kTrackPadding = 4;

  explicit TrackLayout(const Timeline& timeline);
  [[nodiscard]] const std::vector<LayoutRow>& rows() const { return rows_; }
  [[nodiscard]] int height() const { return height_; }
  // The row of the track, for scrolling it into view.
  [[nodiscard]] const LayoutRow* rowOfTrack(std::uint32_t track) const;
  // The row containing content-space y, if any.
  [[nodiscard]] const LayoutRow* rowAt(int y) const;
  [[nodiscard]] static int laneTop(const LayoutRow& row, std::uint32_t lane) {
    return row.y + kTrackPadding / 2 + static_cast<int>(lane) * kLaneHeight;
  }

 private:
  std::vector<LayoutRow> rows_;
  std::vector<int> row_of_track_;
  int height_ = 0;
};

// The slice under (x, content y), accepting a few pixels of slack for narrow slices and markers.
[[nodiscard]] std::optional<SliceRef> hitTest(const Timeline& timeline, const TrackLayout& layout,
                                              const Viewport& viewport, double x, int y);

}  // namespace torchscope::gui
