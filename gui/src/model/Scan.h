// The loader's pieces: slices grouped into tracks as they stream in, the scan of the bulk tables in
// start order, the GPUs' idle gaps found on the way, and the assembly of the finished tracks.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "BulkRows.h"

namespace torchscope::gui::detail {

// Identifies a track while loading: host tracks by (pid, tid), GPU tracks by (device, stream, pid).
struct TrackKey {
  std::uint32_t store = 0;
  bool gpu = false;
  std::int64_t a = 0;  // pid or device
  std::int64_t b = 0;  // tid (-1: the whole process) or stream
  std::int64_t c = 0;  // GPU tracks: the pid
  TrackKind kind = TrackKind::kGpuStream;
  std::uint32_t series = 0;  // counter tracks: the index of their series in counterSeries()
  auto operator<=>(const TrackKey&) const = default;
};

// Slices of each track, nested into lanes as they arrive (in placement order per track).
class TrackSet {
 public:
  TrackSet(Nanos origin, int shift, std::size_t exact_limit);
  void add(const TrackKey& key, const Slice& slice);
  // Forgets the tracks `which` accepts (their table is read again).
  void drop(const std::function<bool(const TrackKey&)>& which);
  [[nodiscard]] std::map<TrackKey, std::vector<Lane>> finish();

 private:
  struct Builder {
    DepthStack depths;
    std::vector<LaneBuilder> lanes;
  };
  Nanos origin_;
  int shift_;
  std::size_t exact_limit_;
  std::map<TrackKey, Builder> builders_;
  const TrackKey* last_key_ = nullptr;
  Builder* last_builder_ = nullptr;
};

// Idle gaps of each GPU, from its work (kernels, copies, memsets) in start order.
class GpuBusy {
 public:
  explicit GpuBusy(Nanos min_gap_ns) : min_gap_ns_(min_gap_ns) {}
  void add(std::uint32_t store, const BulkRow& row);
  void drop(std::uint32_t store);
  [[nodiscard]] std::vector<GpuGap> finish();

 private:
  struct Device {
    Nanos busy_until = 0;
    bool started = false;
    std::vector<GpuGap> gaps;
  };
  Nanos min_gap_ns_;
  std::map<std::pair<std::uint32_t, std::int64_t>, Device> devices_;
};

// What one scanning thread produces.
struct ScanResult {
  std::map<TrackKey, std::vector<Lane>> tracks;
  StatsIndex stats;
  std::vector<GpuGap> gaps;
};

// What a load, scan or counter read returns when its setup's `cancelled` said so.
Error cancelledError();

struct ScanSetup {
  const std::vector<StoreInfo>* stores = nullptr;
  Nanos origin = 0;
  int shift = 0;        // the lanes' finest summary bucket
  int stats_shift = 0;  // the statistics' bucket
  std::size_t exact_limit = 0;
  std::function<bool()> cancelled;
  Nanos min_gap_ns = 1;  // shorter idle stretches of a GPU are not gaps
  // kSpans (the overview): slices without names, statistics counted by kind only, gaps without
  // their launches' correlation ids.
  BulkColumns columns = BulkColumns::kAll;
};

// The share of the bulk tables one loader thread reads. Two shares about even for a training run:
// the GPU's work with the calls that launched it, and the CPU ops with NVTX ranges.
struct ScanShare {
  bool gpu_tables = false;                  // kernels, copies and memsets
  std::span<const BulkTable> host_tables;  // in this order
};
inline constexpr std::array<BulkTable, 1> kLaunchTables{BulkTable::kApiCalls};
inline constexpr std::array<BulkTable, 2> kCpuTables{BulkTable::kCpuOps, BulkTable::kNvtx};
inline constexpr ScanShare kGpuShare{true, kLaunchTables};
inline constexpr ScanShare kCpuShare{false, kCpuTables};

// Reads one share of the tables of every store with a reader of its own, so that the two shares
// can run on two threads.
[[nodiscard]] Result<ScanResult> scanBulk(const ScanSetup& setup, const ScanShare& share);

// The memory_samples series shown as counter lanes, in track order: host RSS, torch's CPU allocator
// (imported profiler traces), a GPU's allocated and reserved bytes.
struct CounterSeries {
  std::string_view series;  // memory_samples.series
  std::string_view title;   // the track's title
};
[[nodiscard]] std::span<const CounterSeries> counterSeries();

// Widens [low, high] to the counter series' first and last samples (index lookups only).
[[nodiscard]] Result<void> widenByCounters(const store::Reader& reader, Nanos shift, Nanos& low, Nanos& high);

// Reads the counter series of every store in time order into counter lanes: host series on the
// process's tracks (a = pid, b = -1), GPU series on the device's (a = device, b = -1, c = pid).
[[nodiscard]] Result<std::map<TrackKey, CounterLane>> scanCounters(const ScanSetup& setup);

// Turns finished tracks into the timeline's ordered, labelled tracks.
void assembleTracks(Timeline& timeline, std::map<TrackKey, std::vector<Lane>> tracks,
                    std::map<TrackKey, CounterLane> counters);

// Finds the cause of the longest gaps with the analyzer, and what the host did during host-late ones.
[[nodiscard]] Result<void> explainGaps(Timeline& timeline, std::size_t limit);

}  // namespace torchscope::gui::detail
