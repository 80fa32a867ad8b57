// Windows of exact slices for summarised lanes, and the flows of a window.
#include <fmt/format.h>

#include <algorithm>

#include "DetailSourceImpl.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/store/Reader.h"

namespace torchscope::gui {

namespace {

using detail::BulkRow;
using detail::BulkTable;
using detail::TrackKey;

// A sync ends a little after the GPU work it waited for: the host has to notice and return.
constexpr Nanos kSyncReturnSlackNs = 50'000;

}  // namespace

const std::vector<Lane>& DetailWindow::lanesOf(const Timeline& timeline, std::uint32_t track) const {
  if (track < lanes.size() && !lanes[track].empty()) return lanes[track];
  return timeline.tracks[track].lanes;
}

const std::vector<Lane>& lanesForFrame(const Timeline& timeline, std::uint32_t track, const FrameScale& frame,
                                      const DetailWindow* window) {
  const auto& own = timeline.tracks[track].lanes;
  const bool coarse = std::any_of(own.begin(), own.end(), [&](const Lane& lane) { return lane.needsDetail(frame); });
  if (!coarse || window == nullptr || !window->covers(frame.begin_ns, frame.endNs())) return own;
  return window->lanesOf(timeline, track);
}

std::uint32_t laneStartingAt(const std::vector<Lane>& lanes, Nanos start_ns) {
  for (std::uint32_t l = 0; l < lanes.size(); ++l) {
    const auto& slices = lanes[l].slices();
    const auto it = std::partition_point(slices.begin(), slices.end(),
                                         [start_ns](const Slice& slice) { return slice.start_ns < start_ns; });
    if (it != slices.end() && it->start_ns == start_ns) return l;
  }
  return 0;
}

DetailSource::Impl::Impl(const Timeline& shown) : timeline(shown), summarised(shown.tracks.size(), false) {
  for (std::uint32_t i = 0; i < shown.tracks.size(); ++i) {
    const Track& track = shown.tracks[i];
    const TrackKey key = track.gpu() ? TrackKey{track.store, true, track.device, track.stream, track.pid, track.kind}
                                     : TrackKey{track.store, false, track.pid, track.tid, 0, track.kind};
    track_of.emplace(key, i);
    summarised[i] = std::any_of(track.lanes.begin(), track.lanes.end(), [](const Lane& lane) { return !lane.exact(); });
  }
}

std::optional<std::uint32_t> DetailSource::Impl::trackOf(const TrackKey& key) const {
  const auto it = track_of.find(key);
  return it == track_of.end() ? std::nullopt : std::optional<std::uint32_t>(it->second);
}

Result<std::vector<std::vector<Lane>>> DetailSource::Impl::fetchLanes(Nanos begin_ns, Nanos end_ns,
                                                                      const std::vector<bool>& wanted) {
  const Nanos long_ns = Nanos{1} << timeline.detail_shift;
  // Slices starting up to two finest buckets before the range may enclose or overlap slices in it.
  const Nanos from_ns = base::saturatingSub(begin_ns, base::saturatingMul(2, long_ns));
  std::vector<std::vector<Slice>> rows(timeline.tracks.size());
  std::vector<bool> read_table(timeline.stores.size() * 6, false);
  for (std::uint32_t t = 0; t < timeline.tracks.size(); ++t) {
    if (!wanted[t] || !summarised[t]) continue;
    const Track& track = timeline.tracks[t];
    if (track.gpu()) {
      for (const BulkTable table : detail::kGpuTables) read_table[track.store * 6 + static_cast<std::size_t>(table)] = true;
    } else {
      const BulkTable table = track.kind == TrackKind::kApiCalls ? BulkTable::kApiCalls
                              : track.kind == TrackKind::kCpuOps ? BulkTable::kCpuOps
                                                                 : BulkTable::kNvtx;
      read_table[track.store * 6 + static_cast<std::size_t>(table)] = true;
    }
    // The long slices are held in memory (every slice of the track's exact lanes among them).
    for (const Lane& lane : track.lanes) {
      for (std::size_t i = lane.firstEndingFrom(from_ns); i < lane.slices().size() && lane.slices()[i].start_ns < end_ns;
           ++i) {
        if (lane.slices()[i].duration() >= long_ns) rows[t].push_back(lane.slices()[i]);
      }
    }
  }
  for (std::uint32_t store = 0; store < timeline.stores.size(); ++store) {
    const Nanos shift = timeline.stores[store].shift_ns;
    for (std::size_t table_index = 0; table_index < 6; ++table_index) {
      if (!read_table[store * 6 + table_index]) continue;
      const auto table = static_cast<BulkTable>(table_index);
      const auto& spec = detail::bulkSpec(table);
      auto read = detail::readBulk(
          *readers[store], timeline.stores[store], table, "start_ns >= ? AND start_ns < ? AND end_ns - start_ns < ?",
          {base::saturatingSub(from_ns, shift), base::saturatingSub(end_ns, shift), long_ns}, "start_ns, end_ns DESC",
          [&](const BulkRow& row) {
            const auto track = spec.gpu ? gpuTrack(store, row.a, row.b, row.pid)
                                        : hostTrack(store, row.pid, row.a, spec.track);
            if (track && wanted[*track]) rows[*track].push_back(row.slice(spec.kind));
          });
      if (!read) return read.error();
    }
  }
  std::vector<std::vector<Lane>> lanes(timeline.tracks.size());
  for (std::uint32_t t = 0; t < rows.size(); ++t) {
    if (wanted[t] && summarised[t]) lanes[t] = buildLanes(std::move(rows[t]));
  }
  return lanes;
}

std::string launchJoinSql(std::string_view gpu_table, FlowSide from, std::string_view where) {
  const bool calls = from == FlowSide::kCalls;
  const std::string calls_table = "api_calls a";
  const std::string work_table = fmt::format("{} g", gpu_table);
  // The correlation-id filter is on the starting side and kept off indexes (unary +): SQLite would
  // otherwise carry it over to the other side's (pid, correlation_id) index as a range and read
  // every later launch of the process for each row instead of the one it joins.
  return fmt::format(
      "SELECT a.pid, a.tid, a.start_ns, g.device, g.stream, g.start_ns FROM {first} JOIN {second} "
      "ON {other}.pid = {start}.pid AND {other}.correlation_id = {start}.correlation_id "
      "WHERE ({where}) AND +{start}.correlation_id >= 0",
      fmt::arg("first", calls ? calls_table : work_table), fmt::arg("second", calls ? work_table : calls_table),
      fmt::arg("start", calls ? "a" : "g"), fmt::arg("other", calls ? "g" : "a"), fmt::arg("where", where));
}

Result<void> DetailSource::Impl::addLaunchFlows(DetailWindow& window) {
  const auto add = [&](std::uint32_t store, const store::Row& row) {
    // Columns: pid, tid, call start, device, stream, GPU start.
    const Nanos shift = timeline.stores[store].shift_ns;
    const auto call = hostTrack(store, row.integer(0), row.integer(1), TrackKind::kApiCalls);
    const auto gpu = gpuTrack(store, row.integer(3), row.integer(4), row.integer(0));
    if (!call || !gpu) return;
    const Nanos call_ns = base::saturatingAdd(row.integer(2), shift);
    const Nanos gpu_ns = base::saturatingAdd(row.integer(5), shift);
    window.flows.push_back({{*call, laneStartingAt(window.lanesOf(timeline, *call), call_ns), call_ns},
                            {*gpu, laneStartingAt(window.lanesOf(timeline, *gpu), gpu_ns), gpu_ns},
                            FlowKind::kLaunch});
  };
  for (std::uint32_t store = 0; store < timeline.stores.size(); ++store) {
    const Nanos begin = base::saturatingSub(window.begin_ns, timeline.stores[store].shift_ns);
    const Nanos end = base::saturatingSub(window.end_ns, timeline.stores[store].shift_ns);
    // Calls in the window, to their kernels; then GPU work in the window whose call is outside it.
    auto calls = readers[store]->query(launchJoinSql("kernels", FlowSide::kCalls, "a.start_ns >= ? AND a.start_ns < ?"),
                                       [&](const store::Row& row) { add(store, row); }, {begin, end});
    if (!calls) return calls;
    for (const std::string_view gpu_table : {"kernels", "memcpy", "memset"}) {
      const bool kernels = gpu_table == "kernels";
      auto work = readers[store]->query(
          launchJoinSql(gpu_table, FlowSide::kWork,
                        kernels ? "g.start_ns >= ? AND g.start_ns < ? AND NOT (a.start_ns >= ? AND a.start_ns < ?)"
                                : "g.start_ns >= ? AND g.start_ns < ?"),
          [&](const store::Row& row) { add(store, row); },
          kernels ? std::vector<store::QueryParam>{begin, end, begin, end} : std::vector<store::QueryParam>{begin, end});
      if (!work) return work;
    }
  }
  return {};
}

std::optional<Flow> DetailSource::Impl::syncFlow(const DetailWindow& window, const SliceRef& ref) const {
  const auto index = static_cast<std::size_t>(ref.slice.row);
  const store::Sync& sync = timeline.records.syncs[index];
  const std::uint32_t store = timeline.records.sync_stores[index];
  std::optional<FlowEnd> waited;
  for (std::uint32_t t = 0; t < timeline.tracks.size(); ++t) {
    const Track& track = timeline.tracks[t];
    if (!track.gpu() || track.store != store || track.pid != sync.pid) continue;
    if (sync.stream >= 0 && track.stream != sync.stream) continue;
    const auto& lanes = window.lanesOf(timeline, t);
    for (std::uint32_t l = 0; l < lanes.size(); ++l) {
      const auto& slices = lanes[l].slices();
      // The last slice to end before the sync returned: the work it waited for, if it ended during the sync.
      const auto it = std::partition_point(slices.begin(), slices.end(), [&](const Slice& slice) {
        return slice.end_ns <= base::saturatingAdd(ref.slice.end_ns, kSyncReturnSlackNs);
      });
      if (it == slices.begin()) continue;
      const Slice& last = *(it - 1);
      if (last.end_ns < ref.slice.start_ns) continue;
      if (!waited || last.end_ns > waited->time_ns) waited = FlowEnd{t, l, last.end_ns};
    }
  }
  if (!waited) return std::nullopt;
  return Flow{*waited, {ref.track, ref.lane, ref.slice.end_ns}, FlowKind::kSync};
}

void DetailSource::Impl::addSyncFlows(DetailWindow& window) const {
  for (std::uint32_t t = 0; t < timeline.tracks.size(); ++t) {
    const Track& track = timeline.tracks[t];
    if (track.kind != TrackKind::kSyncs) continue;
    for (std::uint32_t l = 0; l < track.lanes.size(); ++l) {
      const auto& slices = track.lanes[l].slices();
      for (std::size_t i = track.lanes[l].firstEndingFrom(window.begin_ns);
           i < slices.size() && slices[i].start_ns < window.end_ns; ++i) {
        if (auto flow = syncFlow(window, {t, l, slices[i]})) window.flows.push_back(*flow);
      }
    }
  }
}

DetailSource::DetailSource(std::shared_ptr<const Timeline> timeline)
    : timeline_(std::move(timeline)), impl_(std::make_unique<Impl>(*timeline_)) {}
DetailSource::~DetailSource() = default;

Result<std::unique_ptr<DetailSource>> DetailSource::open(std::shared_ptr<const Timeline> timeline) {
  std::unique_ptr<DetailSource> source(new DetailSource(std::move(timeline)));
  for (const StoreInfo& store : source->timeline_->stores) {
    auto reader = store::Reader::open(store.path);
    if (!reader) return reader.error();
    source->impl_->readers.push_back(std::move(reader).value());
  }
  return source;
}

Result<DetailWindow> DetailSource::fetch(Nanos begin_ns, Nanos end_ns) {
  DetailWindow window;
  window.begin_ns = begin_ns;
  window.end_ns = end_ns;
  auto lanes = impl_->fetchLanes(begin_ns, end_ns, std::vector<bool>(timeline_->tracks.size(), true));
  if (!lanes) return lanes.error();
  window.lanes = std::move(lanes).value();
  std::uint64_t flow_ends = 0;
  for (const NameTotal& total : timeline_->stats.totals(begin_ns, end_ns)) {
    const bool no_flows =
        total.kind == StatKind::kCpuOp || total.kind == StatKind::kNvtx || total.kind == StatKind::kCollective;
    if (!no_flows) flow_ends += total.count;
  }
  if (flow_ends <= kMaxWindowFlows) {
    if (auto launches = impl_->addLaunchFlows(window); !launches) return launches.error();
    impl_->addSyncFlows(window);
  }
  return window;
}

}  // namespace torchscope::gui
