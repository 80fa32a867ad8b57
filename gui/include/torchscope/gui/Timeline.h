// The timeline's data: every timed row of a store arranged into tracks of lanes on the store's
// time base (monotonic ns). Built once, off the GUI thread, and then shared read-only. Qt-free.
//
// Error contract: buildTimeline() never fails; rows with end < start are drawn as instants.
// loadTimeline() fails with the store's errors (see store/Reader.h) or kInvalidArgument when
// cancelled.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchscope/gui/Lane.h"
#include "torchscope/store/Records.h"
#include "torchscope/store/Result.h"

namespace torchscope::gui {

enum class TrackKind : std::uint8_t {
  kSteps,
  kNvtx,
  kCpuOps,
  kApiCalls,
  kSyncs,
  kGpuStream,
  kCompiles,
  kCompileEvents,  // graph breaks and recompiles, drawn as markers
};

struct Track {
  std::string group;  // "process 42 (python)", "GPU 0 (NVIDIA H100)"
  std::string title;  // "thread 43 · CUDA API", "stream 7"
  TrackKind kind = TrackKind::kGpuStream;
  std::vector<Lane> lanes;  // outermost nesting level first

  [[nodiscard]] bool markers() const { return kind == TrackKind::kCompileEvents; }
};

struct SliceRef {
  std::uint32_t track = 0;
  std::uint32_t lane = 0;
  std::uint32_t index = 0;
  friend bool operator==(const SliceRef&, const SliceRef&) = default;
};

// Every row of the store the timeline shows, as loaded.
struct Records {
  store::RunInfo run;
  std::vector<store::Process> processes;
  std::vector<store::Thread> threads;
  std::vector<store::Device> devices;
  std::vector<store::Step> steps;
  std::vector<store::NvtxEvent> nvtx;
  std::vector<store::CpuOp> cpu_ops;
  std::vector<store::ApiCall> api_calls;
  std::vector<store::Sync> syncs;
  std::vector<store::Kernel> kernels;
  std::vector<store::Memcpy> memcpys;
  std::vector<store::Memset> memsets;
  std::vector<store::Compile> compiles;
  std::vector<store::GraphBreak> graph_breaks;
  std::vector<store::Recompile> recompiles;
  std::vector<store::Finding> findings;
};

class Timeline {
 public:
  Records records;
  std::vector<std::string> names;  // interned slice labels
  std::vector<Track> tracks;
  Nanos begin_ns = 0;
  Nanos end_ns = 0;

  [[nodiscard]] const Slice& slice(const SliceRef& ref) const {
    return tracks[ref.track].lanes[ref.lane].slices()[ref.index];
  }
  [[nodiscard]] const std::string& name(const Slice& slice) const { return names[slice.name]; }
  [[nodiscard]] std::size_t sliceCount() const;

  // Slices whose label contains `needle` (ASCII case-insensitive), in track order then time order.
  [[nodiscard]] std::vector<SliceRef> search(std::string_view needle) const;
  // Name ids whose label contains `needle`, as a mask over `names`, for highlighting.
  [[nodiscard]] std::vector<bool> matchingNames(std::string_view needle) const;
};

// Where a finding shows on the timeline: slices at its file:line (syncs, graph breaks, compiles,
// recompiles), else the time range named in its evidence JSON (keys ending in "_ns").
struct FindingLocation {
  std::vector<SliceRef> slices;
  std::optional<std::pair<Nanos, Nanos>> range;
};
[[nodiscard]] FindingLocation locateFinding(const Timeline& timeline, const store::Finding& finding);

[[nodiscard]] std::shared_ptr<const Timeline> buildTimeline(Records records);

// Reads a store with store::Reader. `cancelled` is polled between tables.
[[nodiscard]] Result<std::shared_ptr<const Timeline>> loadTimeline(const std::string& path,
                                                                   const std::function<bool()>& cancelled = {});

}  // namespace torchscope::gui
