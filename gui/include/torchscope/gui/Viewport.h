// Zoom and pan maths of the timeline view, and the time ruler. Qt-free.
//
// Error contract: nothing fails; zoom is clamped to [kMinNsPerPixel, the whole timeline in a
// quarter of the width], and pan keeps part of the timeline on screen.
#pragma once

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

}  // namespace torchscope::gui
