// Paint cost of a timeline with 1 M kernels on one stream: a fit-all frame (level-of-detail
// summaries) and a zoomed frame (individual slices), painted into a QImage with the real painter.
// Prints the numbers; the bounds asserted are loose so that a loaded CI machine does not fail.
#include <gtest/gtest.h>

#include <QGuiApplication>
#include <QImage>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "torchscope/gui/TimelinePainter.h"

namespace torchscope::gui {
namespace {

constexpr int kKernels = 1'000'000;
constexpr int kRepetitions = 5;

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Median paint time in ms of the frame currently set on `axis`.
double medianPaintMs(const PaintState& state, PaintStats& stats) {
  QImage image(state.size, QImage::Format_ARGB32_Premultiplied);
  std::vector<double> times;
  for (int i = 0; i < kRepetitions; ++i) {
    QPainter painter(&image);
    const auto start = std::chrono::steady_clock::now();
    stats = paintTimeline(painter, state);
    times.push_back(millisecondsSince(start));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

TEST(TimelinePaintBenchmark, MillionKernelsStayInteractive) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  static int argc = 1;
  static char name[] = "gui_paint_benchmark";
  static char* argv[] = {name, nullptr};
  QGuiApplication app(argc, argv);  // fonts for the labels

  Records records;
  records.kernels.reserve(kKernels);
  const char* names[] = {"ampere_sgemm_128x64_nn", "vectorized_elementwise_kernel", "reduce_kernel_512",
                         "softmax_warp_forward"};
  store::Nanos t = 1'000'000'000;
  for (int i = 0; i < kKernels; ++i) {
    store::Kernel kernel;
    kernel.pid = 1;
    kernel.stream = 7 + i % 2;  // two streams of 500 k kernels each
    kernel.start_ns = t;
    kernel.end_ns = t + 3'000 + (i % 13) * 500;
    kernel.name = names[i % 4];
    records.kernels.push_back(std::move(kernel));
    t += i % 2 == 1 ? 10'000 : 0;
  }
  auto start = std::chrono::steady_clock::now();
  const auto timeline = buildTimeline(std::move(records));
  const double build_ms = millisecondsSince(start);
  const TrackLayout layout(*timeline);

  Viewport axis;
  PaintState state;
  state.timeline = timeline.get();
  state.layout = &layout;
  state.axis = &axis;
  state.size = QSize(1600, 900);
  axis.setWidth(state.size.width() - state.gutter_width);
  axis.setBounds(timeline->begin_ns, timeline->end_ns);
  axis.fitAll();
  PaintStats full_stats;
  const double full_ms = medianPaintMs(state, full_stats);

  axis.showRange(timeline->begin_ns + 2'000'000'000, timeline->begin_ns + 2'002'000'000, 0);  // 2 ms: ~200 kernels
  PaintStats zoomed_stats;
  const double zoomed_ms = medianPaintMs(state, zoomed_stats);

  axis.showRange(timeline->begin_ns + 2'000'000'000, timeline->begin_ns + 2'200'000'000, 0);  // 200 ms: 40 k kernels
  PaintStats mid_stats;
  const double mid_ms = medianPaintMs(state, mid_stats);

  std::printf("timeline of %d kernels: built in %.0f ms\n", kKernels, build_ms);
  std::printf("fit-all frame: %.2f ms (%zu items)\n", full_ms, full_stats.items);
  std::printf("200 ms frame:  %.2f ms (%zu items)\n", mid_ms, mid_stats.items);
  std::printf("2 ms frame:    %.2f ms (%zu items)\n", zoomed_ms, zoomed_stats.items);
  EXPECT_LE(full_stats.items, 2U * 3U * 1340U);  // two lanes, O(width) items each
  EXPECT_LT(full_ms, 250.0);
  EXPECT_LT(mid_ms, 250.0);
  EXPECT_LT(zoomed_ms, 250.0);
}

}  // namespace
}  // namespace torchscope::gui
