// The timeline on a large store: the time to the first paint (the overview, the first frame that
// shows every lane) and to the full model, the first paint and pan/zoom repaints at 1600x900, the
// detail fetches that zoomed-in frames ask for (on the view's fetch thread, not the paint), and the
// memory held. The baseline, measured in the same run, is the
// cheapest possible read of the same store: one SQLite scan of start_ns, end_ns of every bulk table.
// Every repaint is also painted on a copy of the timeline without idle gaps: the CPU difference is
// what shading them costs a frame. Under callgrind each phase is counted apart (markPhase).
//
// Usage: bench_gui [events=10000000] [dir=/tmp] [repaints=60]
// The store is written once per event count (dir/torchscope_gui_bench_<events>.db) and reused while this build reads it.
#include <fmt/format.h>
#include <sys/resource.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define TORCHSCOPE_HAVE_CALLGRIND 1
#endif

#include <QGuiApplication>
#include <QImage>
#include <QPainter>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ReusedStore.h"
#include "torchscope/gui/DetailSource.h"
#include "torchscope/gui/TimelinePainter.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/Writer.h"

// Designated initializers name only the columns the bench cares about; the rest keep their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace {

using torchscope::base::Nanos;
namespace gui = torchscope::gui;
namespace store = torchscope::store;
using Clock = std::chrono::steady_clock;

double cpuSeconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

double peakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A training run: per step 40% kernels on two streams, 40% their launch calls, 20% nested CPU ops,
// a copy per step and a step marker.
std::int64_t writeStore(const std::string& path, std::int64_t events) {
  std::filesystem::remove(path);
  auto writer = store::Writer::open(path);
  if (!writer) {
    fmt::print(stderr, "cannot write {}: {}\n", path, writer.error().message);
    std::exit(1);
  }
  auto& w = **writer;
  constexpr Nanos kBase = 1'000'000'000;
  store::RunInfo run;
  run.start_ns = kBase;
  run.source = "bench";
  w.setRun(run);
  w.add(store::Process{.pid = 1, .name = "python", .start_ns = kBase});
  w.add(store::Device{.device = 0, .name = "bench GPU"});
  const std::vector<std::string> kernels{"ampere_sgemm_128x64_nn", "vectorized_elementwise_kernel",
                                         "reduce_kernel_512", "softmax_warp_forward", "layer_norm_kernel"};
  constexpr int kKernelsPerStep = 400;
  constexpr Nanos kStepNs = 12'000'000;
  std::int64_t written = 0;
  std::int64_t correlation = 0;
  for (std::int64_t step = 0; written < events; ++step) {
    const Nanos step_start = kBase + step * kStepNs;
    w.add(store::Step{.pid = 1, .tid = 1, .index = step, .start_ns = step_start, .end_ns = step_start + kStepNs - 1000});
    w.add(store::Memcpy{.pid = 1, .device = 0, .stream = 13, .start_ns = step_start, .end_ns = step_start + 200'000,
                        .copy_kind = "HtoD", .bytes = 8 << 20});
    written += 2;
    for (int k = 0; k < kKernelsPerStep && written < events; ++k) {
      const Nanos launch = step_start + 300'000 + k * 25'000;
      if (k % 2 == 0) {
        w.add(store::CpuOp{.pid = 1, .tid = 1, .start_ns = launch - 4'000, .end_ns = launch + 45'000,
                           .name = "aten::linear", .category = "cpu_op"});
        written += 1;
      }
      w.add(store::CpuOp{.pid = 1, .tid = 1, .start_ns = launch - 2'000, .end_ns = launch + 8'000,
                         .name = "aten::addmm", .category = "cpu_op"});
      w.add(store::ApiCall{.pid = 1, .tid = 1, .start_ns = launch, .end_ns = launch + 5'000,
                           .name = "cudaLaunchKernel", .api = "runtime", .correlation_id = correlation});
      const Nanos start = launch + 20'000 + (k % 7) * 1'000;
      w.add(store::Kernel{.pid = 1, .device = 0, .stream = 7 + k % 2, .start_ns = start,
                          .end_ns = start + 12'000 + (k % 11) * 1'000,
                          .name = kernels[static_cast<std::size_t>(k) % kernels.size()], .correlation_id = correlation});
      ++correlation;
      written += 3;
    }
  }
  if (auto closed = w.close(kBase + (written / 1000 + 1) * kStepNs); !closed) {
    fmt::print(stderr, "cannot close {}: {}\n", path, closed.error().message);
    std::exit(1);
  }
  return written;
}

struct Cost {
  double wall_s = 0;
  double cpu_s = 0;
};

// The baseline: one pass of SQLite over start_ns, end_ns of every bulk table, on this thread.
Cost scanStore(const std::string& path) {
  auto reader = store::Reader::open(path);
  if (!reader) return {};
  const auto start = Clock::now();
  const double cpu = cpuSeconds(RUSAGE_THREAD);
  std::int64_t sum = 0;
  for (const char* table : {"kernels", "memcpy", "memset", "api_calls", "cpu_ops", "nvtx"}) {
    auto read = (*reader)->query(fmt::format("SELECT start_ns, end_ns FROM {}", table),
                                 [&](const store::Row& row) { sum += row.integer(1) - row.integer(0); });
    if (!read) return {};
  }
  if (sum == 0) return {};
  return {secondsSince(start), cpuSeconds(RUSAGE_THREAD) - cpu};
}

// Under `valgrind --tool=callgrind` each phase is dumped apart (callgrind.out.N, part k, with the
// phase's name as its trigger): instruction counts that load on the machine does not change.
void markPhase(const char* phase) {
#if TORCHSCOPE_HAVE_CALLGRIND
  CALLGRIND_DUMP_STATS_AT(phase);
#else
  (void)phase;
#endif
}

double ratio(double value, double baseline) { return baseline > 0 ? value / baseline : 0.0; }

struct Percentiles {
  double median = 0;
  double p95 = 0;
  double max = 0;
};

Percentiles percentiles(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  return {values[values.size() / 2], values[values.size() * 95 / 100], values.back()};
}

// The 1-minute load average: wall figures are only comparable at a similar load.
std::string loadAverage() {
  std::ifstream file("/proc/loadavg");
  std::string one_minute;
  file >> one_minute;
  return one_minute.empty() ? std::string("?") : one_minute;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t events = argc > 1 ? std::atoll(argv[1]) : 10'000'000;
  const std::string dir = argc > 2 ? argv[2] : "/tmp";
  const int repaints = argc > 3 ? std::atoi(argv[3]) : 60;
  const std::string path = fmt::format("{}/torchscope_gui_bench_{}.db", dir, events);
  if (!reusableStore(path)) {
    const auto start = Clock::now();
    const std::int64_t written = writeStore(path, events);
    fmt::print("wrote {} events to {} in {:.1f} s\n", written, path, secondsSince(start));
  }
  qputenv("QT_QPA_PLATFORM", "offscreen");
  static int qt_argc = 1;
  static char name[] = "bench_gui";
  static char* qt_argv[] = {name, nullptr};
  QGuiApplication app(qt_argc, qt_argv);  // fonts for the labels

  markPhase("start");
  const Cost scan = scanStore(path);
  markPhase("baseline scan");
  const double rss_before = peakRssMiB();
  const std::string load_before = loadAverage();
  QImage image(QSize(1600, 900), QImage::Format_ARGB32_Premultiplied);
  struct FirstFrame {
    double at_s = 0;  // since loading started
    double wall_ms = 0;
    double cpu_ms = 0;
    gui::PaintStats stats;
  };
  // The first view of a timeline, as the window shows it: the focus at 1600x900.
  const auto paintFirstView = [&](const gui::Timeline& shown, double at_s) {
    const gui::TrackLayout first_layout(shown);
    gui::Viewport first_axis;
    gui::PaintState first_state;
    first_state.timeline = &shown;
    first_state.layout = &first_layout;
    first_state.axis = &first_axis;
    first_state.size = image.size();
    first_axis.setWidth(first_state.size.width() - first_state.gutter_width);
    first_axis.setBounds(shown.begin_ns, shown.end_ns);
    first_axis.showRange(shown.focus.begin_ns, shown.focus.end_ns, 0.02);
    QPainter painter(&image);
    const double cpu = cpuSeconds(RUSAGE_THREAD);
    const auto start = Clock::now();
    FirstFrame frame;
    frame.stats = gui::paintTimeline(painter, first_state);
    frame.wall_ms = secondsSince(start) * 1e3;
    frame.cpu_ms = (cpuSeconds(RUSAGE_THREAD) - cpu) * 1e3;
    frame.at_s = at_s + frame.wall_ms / 1e3;
    return frame;
  };
  const double cpu_before = cpuSeconds(RUSAGE_SELF);
  const auto load_start = Clock::now();
  // The overview is handed over on the loading thread, before the full model is read: painting it
  // there is what the window shows first (there the GUI thread paints it while loading goes on).
  std::optional<FirstFrame> overview_frame;
  double overview_cpu_s = 0;
  gui::LoadLimits limits;
  limits.overview_from_rows = 0;  // smaller stores (1 M events under callgrind) go through the overview too
  auto loaded = gui::loadTimeline({path}, {}, limits, [&](std::shared_ptr<const gui::Timeline> overview) {
    overview_cpu_s = cpuSeconds(RUSAGE_SELF) - cpu_before;
    overview_frame = paintFirstView(*overview, secondsSince(load_start));
    markPhase("overview and its first paint");
  });
  const double overview_paint_s = overview_frame ? overview_frame->wall_ms / 1e3 : 0.0;
  const double overview_paint_cpu_s = overview_frame ? overview_frame->cpu_ms / 1e3 : 0.0;
  const double load_s = secondsSince(load_start) - overview_paint_s;
  const double load_cpu_s = cpuSeconds(RUSAGE_SELF) - cpu_before - overview_paint_cpu_s;
  if (!loaded) {
    fmt::print(stderr, "cannot load {}: {}\n", path, loaded.error().message);
    return 1;
  }
  const auto timeline = loaded.value();
  const double rss_after = peakRssMiB();
  markPhase("load");
  const FirstFrame full_frame = paintFirstView(*timeline, load_s);

  const gui::TrackLayout layout(*timeline);
  gui::Viewport axis;
  gui::PaintState state;
  state.timeline = timeline.get();
  state.layout = &layout;
  state.axis = &axis;
  state.size = image.size();
  axis.setWidth(state.size.width() - state.gutter_width);
  axis.setBounds(timeline->begin_ns, timeline->end_ns);
  axis.showRange(timeline->focus.begin_ns, timeline->focus.end_ns, 0.02);

  const auto paint = [&](gui::PaintStats* stats) {
    QPainter painter(&image);
    const double cpu = cpuSeconds(RUSAGE_THREAD);
    const auto start = Clock::now();
    const gui::PaintStats drawn = gui::paintTimeline(painter, state);
    if (stats != nullptr) *stats = drawn;
    return std::make_pair(secondsSince(start) * 1e3, (cpuSeconds(RUSAGE_THREAD) - cpu) * 1e3);
  };

  // Pan and zoom: from the whole run down to a few milliseconds and back, panning on the way. The
  // frames and the detail fetches they need come first, then the frames are painted, then painted
  // again without gaps: each phase ends with a callgrind dump of its own instruction count.
  markPhase("first paint");
  auto source = gui::DetailSource::open(timeline);
  if (!source) return 1;
  struct Frame {
    gui::Viewport axis;
    std::shared_ptr<const gui::DetailWindow> window;
  };
  std::vector<Frame> frames;
  std::vector<double> fetch_ms;
  std::vector<double> fetch_cpu_ms;
  std::vector<double> fetch_rows;
  std::shared_ptr<const gui::DetailWindow> window;
  for (int i = 0; i < repaints; ++i) {
    const int phase = i % 20;
    const double factor = phase < 10 ? 0.35 : 1 / 0.35;
    axis.zoomAround(axis.width() / 2, factor);
    axis.panPixels(phase % 3 == 0 ? 120 : -40);
    const gui::FrameScale frame = axis.frame();
    bool coarse = false;
    for (const auto& track : timeline->tracks) {
      for (const auto& lane : track.lanes) coarse = coarse || lane.needsDetail(frame);
    }
    if (coarse && (!window || !window->covers(frame.begin_ns, frame.endNs()))) {
      // What the view's fetch thread does, timed apart from the paint.
      const Nanos span = frame.endNs() - frame.begin_ns;
      const auto start = Clock::now();
      const double fetch_cpu = cpuSeconds(RUSAGE_THREAD);
      auto fetched = (*source)->fetch(frame.begin_ns - span, frame.endNs() + span);
      fetch_ms.push_back(secondsSince(start) * 1e3);
      fetch_cpu_ms.push_back((cpuSeconds(RUSAGE_THREAD) - fetch_cpu) * 1e3);
      double slices = 0;
      for (const auto& lanes : fetched ? fetched->lanes : std::vector<std::vector<gui::Lane>>{}) {
        for (const auto& lane : lanes) slices += static_cast<double>(lane.count());
      }
      fetch_rows.push_back(slices);
      if (fetched) window = std::make_shared<const gui::DetailWindow>(std::move(fetched).value());
    }
    frames.push_back({axis, window});
  }
  markPhase("detail fetches");
  std::vector<double> wall_ms;
  std::vector<double> cpu_ms;
  std::vector<gui::PaintStats> frame_stats;
  std::size_t max_items = 0;
  std::size_t gaps_shaded = 0;
  for (const Frame& frame : frames) {
    axis = frame.axis;
    state.window = frame.window.get();
    gui::PaintStats stats;
    const auto [wall, cpu] = paint(&stats);
    wall_ms.push_back(wall);
    cpu_ms.push_back(cpu);
    frame_stats.push_back(stats);
    max_items = std::max(max_items, stats.items);
    gaps_shaded += stats.gaps;
  }
  markPhase("repaints");
  // The same timeline without idle gaps, the same frames: the difference is the shading.
  auto without_gaps = std::make_shared<gui::Timeline>(*timeline);
  without_gaps->gaps.clear();
  markPhase("copy without idle gaps");
  std::vector<double> gap_cpu_ms;  // by frame: CPU with the gaps shaded minus without
  state.timeline = without_gaps.get();
  for (std::size_t i = 0; i < frames.size(); ++i) {
    axis = frames[i].axis;
    state.window = frames[i].window.get();
    gap_cpu_ms.push_back(cpu_ms[i] - paint(nullptr).second);
  }
  markPhase("repaints without idle gaps");
  const Percentiles wall = percentiles(wall_ms);
  const Percentiles cpu = percentiles(cpu_ms);
  const Percentiles fetch = percentiles(fetch_ms);
  const Percentiles fetch_cpu = percentiles(fetch_cpu_ms);
  const Percentiles fetched_slices = percentiles(fetch_rows);
  const Percentiles gap_cpu = percentiles(gap_cpu_ms);

  fmt::print("store: {} ({} slices on {} tracks, {:.0f} MiB on disk)\n", path, timeline->sliceCount(),
             timeline->tracks.size(), static_cast<double>(std::filesystem::file_size(path)) / (1 << 20));
  fmt::print("baseline: SQLite scan of start_ns, end_ns of every bulk table: {:.2f} s wall, {:.2f} s CPU\n",
             scan.wall_s, scan.cpu_s);
  fmt::print("load: {:.2f} s wall, {:.2f} s CPU (both loader threads); {:.2f}x the baseline's wall, {:.2f}x its CPU\n",
             load_s, load_cpu_s, ratio(load_s, scan.wall_s), ratio(load_cpu_s, scan.cpu_s));
  if (overview_frame) {
    fmt::print("overview: {:.2f} s wall, {:.2f} s CPU (both loader threads); its first paint {:.2f} ms wall, "
               "{:.2f} ms CPU, {} items on {} lanes\n",
               overview_frame->at_s - overview_paint_s, overview_cpu_s, overview_frame->wall_ms, overview_frame->cpu_ms,
               overview_frame->stats.items, overview_frame->stats.lanes);
  }
  fmt::print("full model's first paint (the GPUs' work, 1600x900): {:.2f} ms wall, {:.2f} ms CPU, {} items on {} lanes\n",
             full_frame.wall_ms, full_frame.cpu_ms, full_frame.stats.items, full_frame.stats.lanes);
  fmt::print("time to first paint (every lane drawn): {:.2f} s; to the full model's first paint: {:.2f} s\n",
             overview_frame ? overview_frame->at_s : full_frame.at_s, full_frame.at_s);
  fmt::print("repaints ({} pan/zoom frames): wall median {:.2f} ms, p95 {:.2f}, max {:.2f}; CPU median {:.2f} ms, "
             "p95 {:.2f}, max {:.2f}; at most {} items\n",
             repaints, wall.median, wall.p95, wall.max, cpu.median, cpu.p95, cpu.max, max_items);
  // The slowest frames by CPU, to see what they do.
  std::vector<std::size_t> slowest(cpu_ms.size());
  for (std::size_t i = 0; i < slowest.size(); ++i) slowest[i] = i;
  std::sort(slowest.begin(), slowest.end(), [&](std::size_t a, std::size_t b) { return cpu_ms[a] > cpu_ms[b]; });
  slowest.resize(std::min<std::size_t>(slowest.size(), 3));
  for (const std::size_t i : slowest) {
    fmt::print("  frame {}: {:.2f} ms wall, {:.2f} ms CPU, {:.0f} ns a pixel, {} items, {} flows, {} gaps, {}\n", i,
               wall_ms[i], cpu_ms[i], frames[i].axis.frame().ns_per_px, frame_stats[i].items, frame_stats[i].flows,
               frame_stats[i].gaps, frames[i].window ? "with a detail window" : "summaries only");
  }
  fmt::print("idle-gap shading (CPU with minus without, per frame): median {:.3f} ms, p95 {:.3f}, max {:.3f}; "
             "{:.1f} gaps shaded per frame\n",
             gap_cpu.median, gap_cpu.p95, gap_cpu.max,
             repaints > 0 ? static_cast<double>(gaps_shaded) / repaints : 0.0);
  fmt::print("detail fetches (fetch thread, {} of them, median {:.0f} slices): wall median {:.1f} ms, p95 {:.1f}, "
             "max {:.1f}; CPU median {:.1f} ms, p95 {:.1f}, max {:.1f}\n",
             fetch_ms.size(), fetched_slices.median, fetch.median, fetch.p95, fetch.max, fetch_cpu.median,
             fetch_cpu.p95, fetch_cpu.max);
  fmt::print("peak RSS: {:.0f} MiB before loading, {:.0f} MiB after\n", rss_before, rss_after);
  fmt::print("load average (1 min): {} when loading started, {} at the end\n", load_before, loadAverage());
  return 0;
}
