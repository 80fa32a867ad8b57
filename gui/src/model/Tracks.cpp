// Orders and labels the finished tracks: per process (torch.compile, its memory counters, then each
// thread's steps, NVTX, CPU ops, CUDA API, syncs and collectives), then its GPUs' memory counters and streams;
// ranks one after another, lowest first, so that the ranks of a distributed job lie side by side on
// the one time axis.
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "Scan.h"

namespace torchscope::gui::detail {

namespace {

std::string_view kindLabel(TrackKind kind) {
  switch (kind) {
    case TrackKind::kSteps: return "steps";
    case TrackKind::kNvtx: return "NVTX";
    case TrackKind::kCpuOps: return "CPU ops";
    case TrackKind::kApiCalls: return "CUDA API";
    case TrackKind::kSyncs: return "syncs";
    case TrackKind::kCollectives: return "collectives";
    case TrackKind::kGpuStream: return "GPU";
    case TrackKind::kCompiles: return "torch.compile";
    case TrackKind::kCompileEvents: return "graph breaks · recompiles";
    case TrackKind::kCounter: return "memory";
  }
  return "";
}

using StorePid = std::pair<std::uint32_t, std::int64_t>;

class Labels {
 public:
  explicit Labels(const Timeline& timeline) : timeline_(timeline) {
    const Records& r = timeline.records;
    for (std::size_t i = 0; i < r.processes.size(); ++i) processes_[{r.process_stores[i], r.processes[i].pid}] = i;
    for (std::size_t i = 0; i < r.threads.size(); ++i) {
      threads_[{r.thread_stores[i], r.threads[i].pid, r.threads[i].tid}] = r.threads[i].name;
    }
    for (std::size_t i = 0; i < r.devices.size(); ++i) devices_[{r.device_stores[i], r.devices[i].device}] = r.devices[i].name;
  }

  [[nodiscard]] std::int64_t rank(std::uint32_t store, std::int64_t pid) const {
    const auto it = processes_.find({store, pid});
    return it == processes_.end() ? -1 : timeline_.records.processes[it->second].rank;
  }

  [[nodiscard]] std::string processGroup(std::uint32_t store, std::int64_t pid) const {
    std::string label = fmt::format("process {}", pid);
    const auto it = processes_.find({store, pid});
    if (it != processes_.end()) {
      const store::Process& process = timeline_.records.processes[it->second];
      if (!process.name.empty()) label += fmt::format(" ({})", process.name);
      if (process.rank >= 0) label += fmt::format(" rank {}", process.rank);
    }
    return storePrefix(store, pid) + label;
  }

  [[nodiscard]] std::string gpuGroup(std::uint32_t store, std::int64_t device, std::int64_t pid,
                                     bool per_process) const {
    const auto it = devices_.find({store, device});
    std::string label = it != devices_.end() && !it->second.empty() ? fmt::format("GPU {} ({})", device, it->second)
                                                                     : fmt::format("GPU {}", device);
    const std::int64_t r = rank(store, pid);
    if (per_process && r >= 0) return storePrefix(store, pid) + fmt::format("rank {} · ", r) + label;
    return storePrefix(store, pid) + label;
  }

  [[nodiscard]] std::string threadTitle(std::uint32_t store, std::int64_t pid, std::int64_t tid, TrackKind kind) const {
    if (tid < 0) return std::string(kindLabel(kind));
    std::string owner = fmt::format("thread {}", tid);
    const auto it = threads_.find({store, pid, tid});
    if (it != threads_.end() && !it->second.empty()) owner += fmt::format(" ({})", it->second);
    return fmt::format("{} · {}", owner, kindLabel(kind));
  }

 private:
  // With several stores, groups of ranked processes are told apart by rank, the others by file.
  [[nodiscard]] std::string storePrefix(std::uint32_t store, std::int64_t pid) const {
    if (timeline_.stores.size() < 2 || rank(store, pid) >= 0) return {};
    return std::filesystem::path(timeline_.stores[store].path).filename().string() + " · ";
  }

  const Timeline& timeline_;
  std::map<StorePid, std::size_t> processes_;
  std::map<std::tuple<std::uint32_t, std::int64_t, std::int64_t>, std::string> threads_;
  std::map<StorePid, std::string> devices_;
};

}  // namespace

void assembleTracks(Timeline& timeline, std::map<TrackKey, std::vector<Lane>> tracks,
                    std::map<TrackKey, CounterLane> counters) {
  const Labels labels(timeline);
  // Counter tracks have no lanes: they take their place in the order with an empty list.
  for (const auto& [key, counter] : counters) tracks.emplace(key, std::vector<Lane>{});
  // GPUs used by more than one process (without ranks) get one group, with the process in each title.
  std::map<std::pair<std::uint32_t, std::int64_t>, std::set<std::int64_t>> device_pids;
  for (const auto& [key, lanes] : tracks) {
    if (key.gpu) device_pids[{key.store, key.a}].insert(key.c);
  }
  const auto ranked = [&](const TrackKey& key) {
    const std::int64_t pid = key.gpu ? key.c : key.a;
    const std::int64_t rank = labels.rank(key.store, pid);
    // Unranked processes keep store order after the ranked ones; a process's GPUs follow it.
    return std::make_tuple(rank < 0 ? std::int64_t{1} << 40 : rank, key.store, rank < 0 ? 0 : pid, key.gpu, key.a,
                           key.b, key.c, key.kind);
  };
  std::vector<std::pair<TrackKey, std::vector<Lane>>> ordered(std::make_move_iterator(tracks.begin()),
                                                             std::make_move_iterator(tracks.end()));
  std::stable_sort(ordered.begin(), ordered.end(),
                   [&](const auto& x, const auto& y) { return ranked(x.first) < ranked(y.first); });

  for (auto& [key, lanes] : ordered) {
    Track track;
    track.kind = key.kind;
    track.store = key.store;
    if (key.gpu) {
      track.device = key.a;
      track.stream = key.b;
      track.pid = key.c;
      const bool shared = device_pids[{key.store, key.a}].size() > 1;
      const bool per_process = labels.rank(key.store, key.c) >= 0;
      track.group = labels.gpuGroup(key.store, key.a, key.c, per_process);
      track.title = key.b >= 0 ? fmt::format("stream {}", key.b) : std::string("stream ?");
      if (shared && !per_process) track.title += fmt::format(" · process {}", key.c);
    } else {
      track.pid = key.a;
      track.tid = key.b;
      track.group = labels.processGroup(key.store, key.a);
      track.title = labels.threadTitle(key.store, key.a, key.b, key.kind);
    }
    if (key.kind == TrackKind::kCounter) {
      const CounterSeries& series = counterSeries()[key.series];
      track.stream = -1;
      track.series = std::string(series.series);
      track.title = std::string(series.title);
      if (key.gpu && device_pids[{key.store, key.a}].size() > 1 && labels.rank(key.store, key.c) < 0) {
        track.title += fmt::format(" · process {}", key.c);
      }
      track.counter = std::move(counters.at(key));
    }
    track.lanes = std::move(lanes);
    timeline.tracks.push_back(std::move(track));
  }
}

}  // namespace torchscope::gui::detail
