#include "torchscope/gui/Viewport.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "torchscope/base/Saturating.h"

namespace torchscope::gui {

namespace {

// "12.3452 s": the unit of the value's magnitude, with enough decimals to tell ticks `step_ns` apart.
std::string tickLabel(Nanos value_ns, double step_ns) {
  constexpr std::array<std::pair<double, const char*>, 4> kUnits{
      {{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}, {1.0, "ns"}}};
  const double magnitude = std::abs(static_cast<double>(value_ns));
  for (const auto& [scale, unit] : kUnits) {
    if (magnitude >= scale || scale == 1.0) {
      const int decimals = std::max(0, static_cast<int>(std::ceil(std::log10(scale / step_ns) - 1e-9)));
      return fmt::format("{:.{}f} {}", static_cast<double>(value_ns) / scale, decimals, unit);
    }
  }
  return {};
}

}  // namespace

void Viewport::setBounds(Nanos begin_ns, Nanos end_ns) {
  bounds_begin_ns_ = begin_ns;
  bounds_end_ns_ = std::max(end_ns, base::saturatingAdd(begin_ns, 1));
  clamp();
}

void Viewport::setWidth(double width_px) {
  width_px_ = std::max(1.0, width_px);
  clamp();
}

void Viewport::fitAll() { showRange(bounds_begin_ns_, bounds_end_ns_, 0.02); }

void Viewport::showRange(Nanos begin_ns, Nanos end_ns, double margin) {
  const double length = std::max<double>(1.0, static_cast<double>(base::spanNanos(begin_ns, end_ns)));
  const double padded = length * (1 + 2 * margin);
  ns_per_px_ = padded / width_px_;
  begin_ns_ = base::saturatingSub(begin_ns, base::saturatingCast(length * margin));
  if (end_ns == begin_ns) begin_ns_ = base::saturatingSub(begin_ns, base::saturatingCast(padded / 2));
  clamp();
}

void Viewport::zoomAround(double x, double factor) {
  const double anchor = static_cast<double>(begin_ns_) + x * ns_per_px_;
  ns_per_px_ *= factor;
  clamp();
  begin_ns_ = base::saturatingCast(std::round(anchor - x * ns_per_px_));
  clamp();
}

void Viewport::panPixels(double dx) {
  begin_ns_ = base::saturatingSub(begin_ns_, base::saturatingCast(std::round(dx * ns_per_px_)));
  clamp();
}

void Viewport::clamp() {
  const double span = static_cast<double>(base::spanNanos(bounds_begin_ns_, bounds_end_ns_));
  const double max_ns_per_px = std::max(kMinNsPerPixel, 4 * span / width_px_);
  ns_per_px_ = std::clamp(ns_per_px_, kMinNsPerPixel, max_ns_per_px);
  const Nanos half_visible = base::saturatingCast(ns_per_px_ * width_px_ / 2);
  begin_ns_ = std::clamp(begin_ns_, base::saturatingSub(bounds_begin_ns_, half_visible),
                         base::saturatingSub(bounds_end_ns_, half_visible));
}

std::vector<Tick> rulerTicks(const Viewport& viewport, Nanos origin_ns, double min_spacing_px) {
  const double min_step = std::max(1.0, min_spacing_px * viewport.nsPerPixel());
  double decade = std::pow(10.0, std::floor(std::log10(min_step)));
  double step = decade;
  for (const double mantissa : {1.0, 2.0, 5.0, 10.0}) {
    step = mantissa * decade;
    if (step >= min_step) break;
  }
  std::vector<Tick> ticks;
  const Nanos step_ns = std::max<Nanos>(1, base::saturatingCast(step));
  // The first multiple of the step at or after the frame's start (division truncates towards zero).
  const Nanos relative_begin = base::saturatingSub(viewport.beginNs(), origin_ns);
  Nanos tick = relative_begin / step_ns * step_ns;
  if (tick < relative_begin) tick = base::saturatingAdd(tick, step_ns);
  const FrameScale frame = viewport.frame();
  const Nanos end_ns = viewport.endNs();
  // Times at the int64 edges clamp: a tick that cannot move further ends the ruler.
  for (Nanos at = base::saturatingAdd(origin_ns, tick); at <= end_ns;) {
    ticks.push_back({frame.xAt(at), tickLabel(tick, step)});
    const Nanos next_tick = base::saturatingAdd(tick, step_ns);
    const Nanos next_at = base::saturatingAdd(origin_ns, next_tick);
    if (next_tick == tick || next_at == at) break;
    tick = next_tick;
    at = next_at;
  }
  return ticks;
}

}  // namespace torchscope::gui
