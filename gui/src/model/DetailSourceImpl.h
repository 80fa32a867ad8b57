// DetailSource's state and its pieces, shared by its files (windows, flows, row fields, search).
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "Scan.h"
#include "torchscope/gui/DetailSource.h"

namespace torchscope::gui {

struct DetailSource::Impl {
  explicit Impl(const Timeline& shown);

  [[nodiscard]] std::optional<std::uint32_t> trackOf(const detail::TrackKey& key) const;
  [[nodiscard]] std::optional<std::uint32_t> hostTrack(std::uint32_t store, std::int64_t pid, std::int64_t tid,
                                                       TrackKind kind) const {
    return trackOf({store, false, pid, tid, 0, kind});
  }
  [[nodiscard]] std::optional<std::uint32_t> gpuTrack(std::uint32_t store, std::int64_t device, std::int64_t stream,
                                                      std::int64_t pid) const {
    return trackOf({store, true, device, stream, pid, TrackKind::kGpuStream});
  }

  // Every slice of [begin_ns, end_ns) of the tracks in `wanted` (by track; only summarised ones are
  // read), nested as the loader nested them: the store's short rows of the range and a margin before
  // it, with the lanes' long slices held in memory.
  [[nodiscard]] Result<std::vector<std::vector<Lane>>> fetchLanes(Nanos begin_ns, Nanos end_ns,
                                                                  const std::vector<bool>& wanted);
  // Launch flows of the range: calls in it to their GPU work, and GPU work in it from its calls.
  [[nodiscard]] Result<void> addLaunchFlows(DetailWindow& window);
  // Sync flows of the syncs that start in the window.
  void addSyncFlows(DetailWindow& window) const;
  // The flow of one sync, if the GPU work it waited for is in `window`.
  [[nodiscard]] std::optional<Flow> syncFlow(const DetailWindow& window, const SliceRef& sync) const;

  const Timeline& timeline;
  std::vector<std::unique_ptr<store::Reader>> readers;  // by store
  std::map<detail::TrackKey, std::uint32_t> track_of;
  std::vector<bool> summarised;  // by track: some lane keeps only summaries
};

// The lane of `lanes` holding a slice that starts at start_ns (0 when none does).
[[nodiscard]] std::uint32_t laneStartingAt(const std::vector<Lane>& lanes, Nanos start_ns);

}  // namespace torchscope::gui
