// The timeline's data: every timed row of one or more stores arranged into tracks of lanes on one
// clock (the first store's monotonic ns; other stores are aligned through their wall-clock anchor).
// Loaded once, off the GUI thread, and then shared read-only. Qt-free.
//
// The small tables (steps, syncs, compiles, graph breaks, recompiles, findings, ...) are kept whole;
// the bulk tables (kernels, copies, memsets, CUDA API calls, CPU ops, NVTX) are kept as slices of
// bounded-size lanes (Lane.h) and read again from the store when a frame needs more (DetailSource.h); the
// memory series (host RSS, a GPU's allocated and reserved bytes) as counter lanes (CounterLane.h).
//
// Error contract: loadTimeline() fails with the store's errors (see store/Reader.h) or
// kInvalidArgument when cancelled; the queries never fail.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchscope/analyzer/Finding.h"
#include "torchscope/analyzer/IdleGaps.h"
#include "torchscope/base/Result.h"
#include "torchscope/gui/CounterLane.h"
#include "torchscope/gui/Lane.h"
#include "torchscope/gui/StatsIndex.h"
#include "torchscope/store/Records.h"

namespace torchscope::gui {

enum class TrackKind : std::uint8_t {
  kSteps,
  kNvtx,
  kCpuOps,
  kApiCalls,
  kSyncs,
  kCollectives,  // torch.distributed calls and DDP buckets of one thread
  kGpuStream,    // kernels, copies and memsets of one stream
  kCompiles,
  kCompileEvents,  // graph breaks and recompiles, drawn as markers
  kCounter,        // one memory series over time, drawn as a filled step band
};

struct Track {
  std::string group;  // "process 42 (python)", "rank 1 · GPU 0 (NVIDIA H100)"
  std::string title;  // "thread 43 · CUDA API", "stream 7"
  TrackKind kind = TrackKind::kGpuStream;
  // Where its rows come from: the store, and the pid with tid (host tracks, -1 for process-wide)
  // or device with stream (GPU tracks).
  std::uint32_t store = 0;
  std::int64_t pid = -1;
  std::int64_t tid = -1;
  std::int64_t device = -1;
  std::int64_t stream = -1;
  std::vector<Lane> lanes;  // outermost nesting level first; none for a counter track
  std::string series;       // counter tracks: the memory_samples series ("host.rss", "cuda.reserved")
  CounterLane counter;      // counter tracks: its values

  [[nodiscard]] bool markers() const { return kind == TrackKind::kCompileEvents; }
  [[nodiscard]] bool gpu() const { return kind == TrackKind::kGpuStream; }
  [[nodiscard]] bool isCounter() const { return kind == TrackKind::kCounter; }
};

// A slice as shown on one lane of one track.
struct SliceRef {
  std::uint32_t track = 0;
  std::uint32_t lane = 0;
  Slice slice;
  friend bool operator==(const SliceRef&, const SliceRef&) = default;
};

struct StoreInfo {
  std::string path;
  store::RunInfo run;
  Nanos shift_ns = 0;  // added to the store's times to put them on the timeline's clock
  std::vector<std::uint32_t> string_names;  // the store's interned string ids -> Timeline::names
  std::map<std::string, std::uint32_t, std::less<>> labels;  // labels of copies and memsets -> Timeline::names
};

// The small tables of every store, on the timeline's clock. Slices of these kinds index them.
struct Records {
  std::vector<store::Process> processes;
  std::vector<store::Thread> threads;
  std::vector<store::Device> devices;
  std::vector<store::Step> steps;
  std::vector<store::Sync> syncs;
  std::vector<store::Collective> collectives;
  std::vector<store::Compile> compiles;
  std::vector<store::GraphBreak> graph_breaks;
  std::vector<store::Recompile> recompiles;
  std::vector<analyzer::Finding> findings;  // analyzer::loadFindings: evidence parsed, rule and severity typed
  std::vector<store::FixExperiment> fix_experiments;
  // The store each row of the vector of the same name comes from.
  std::vector<std::uint32_t> process_stores;
  std::vector<std::uint32_t> thread_stores;
  std::vector<std::uint32_t> device_stores;
  std::vector<std::uint32_t> sync_stores;
  std::vector<std::uint32_t> collective_stores;
};

// A stretch where a GPU ran nothing, between two pieces of its work, with the analyzer's cause.
struct GpuGap {
  std::uint32_t store = 0;
  analyzer::IdleGap gap;      // times on the timeline's clock
  std::string host_activity;  // host-late gaps: what the launching thread did meanwhile, "cudaFree (6.01 s)"
};

// What the initial view frames, and why.
struct Focus {
  Nanos begin_ns = 0;
  Nanos end_ns = 0;
  std::string what;  // "the GPU's work", "the whole run"
};

// How much a lane keeps in memory; the defaults suit tens of millions of events.
struct LoadLimits {
  std::size_t exact_slices_per_lane = std::size_t{1} << 18;
  int summary_buckets_log2 = 18;  // the finest summary bucket is about 2^-18 of the run
  std::size_t explained_gaps = 20000;  // the longest gaps get their cause from the analyzer
  // Stores with more bulk rows than this are shown as an overview first (when loadTimeline() is
  // given a callback for it): lanes of at most `overview_exact_slices_per_lane` exact slices, the
  // others summarised down to about 2^-overview_buckets_log2 of the run (several buckets per pixel
  // of a whole-run view 1600 px wide).
  std::uint64_t overview_from_rows = std::uint64_t{1} << 20;
  int overview_buckets_log2 = 14;
  std::size_t overview_exact_slices_per_lane = std::size_t{1} << 12;
};

// How finely the bulk lanes were read. An overview has the full model's tracks, lanes, extent,
// first view, statistics and idle gaps; only its summarised lanes stop at a coarser finest bucket
// (frames finer than that fetch their slices from the store, as the full model's do past its own).
enum class Resolution : std::uint8_t { kOverview, kFull };

class Timeline {
 public:
  std::vector<StoreInfo> stores;
  Records records;
  std::vector<std::string> names;  // interned slice labels
  std::vector<Track> tracks;
  Nanos begin_ns = 0;
  Nanos end_ns = 0;
  Focus focus;
  int detail_shift = 0;  // the finest summary bucket is 2^detail_shift ns
  Resolution resolution = Resolution::kFull;
  StatsIndex stats;
  std::vector<GpuGap> gaps;  // by store, device, then start

  [[nodiscard]] const std::string& name(const Slice& slice) const { return names[slice.name]; }
  [[nodiscard]] std::size_t sliceCount() const;
  // Name ids whose label contains `needle` (ASCII case-insensitive), as a mask over `names`.
  [[nodiscard]] std::vector<bool> matchingNames(std::string_view needle) const;
  // Tracks showing the given GPU (store, device), in track order.
  [[nodiscard]] std::vector<std::uint32_t> gpuTracks(std::uint32_t store, std::int64_t device) const;
  // The gaps of one GPU that overlap [from_ns, to_ns), as a range of `gaps`.
  [[nodiscard]] std::pair<std::size_t, std::size_t> gapsIn(std::uint32_t store, std::int64_t device, Nanos from_ns,
                                                           Nanos to_ns) const;
  // The slice of `kind` and `row` on a track, if it is held in memory (exact lanes and long slices).
  [[nodiscard]] std::optional<SliceRef> findInMemory(std::uint32_t track, RecordKind kind, std::int64_t row,
                                                     Nanos start_ns) const;
};

// Where a finding shows on the timeline. A memory finding: the steps its evidence names (where the
// growth is measured, the step of the peak) and its series' counter track. Any other: slices at its
// file:line (syncs, graph breaks, compiles, recompiles), else the time range named in its evidence
// JSON (keys ending in "_ns").
struct FindingLocation {
  std::vector<SliceRef> slices;
  std::optional<std::pair<Nanos, Nanos>> range;
  std::optional<std::uint32_t> track;  // a track to bring into view
};
[[nodiscard]] FindingLocation locateFinding(const Timeline& timeline, const analyzer::Finding& finding);

// Reads the stores with store::Reader and arranges them; `cancelled` is polled between steps.
// With `on_overview`, a large store (LoadLimits::overview_from_rows) is read twice: a first pass
// builds the overview and hands it to `on_overview` (on the loading thread), the second the full
// model, which is returned. Both have the same tracks in the same order with the same lanes.
using OverviewReady = std::function<void(std::shared_ptr<const Timeline>)>;
[[nodiscard]] Result<std::shared_ptr<const Timeline>> loadTimeline(const std::vector<std::string>& paths,
                                                                   const std::function<bool()>& cancelled = {},
                                                                   const LoadLimits& limits = {},
                                                                   const OverviewReady& on_overview = {});

}  // namespace torchscope::gui
