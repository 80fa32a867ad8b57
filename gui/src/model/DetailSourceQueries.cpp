// Reads for one selected slice (its row, its flows) and the search's next match.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "DetailSourceImpl.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/store/Reader.h"

namespace torchscope::gui {

namespace {

using detail::BulkTable;

// Bulk tables are read through their view where one resolves interned names.
std::string_view readableTable(RecordKind kind) {
  switch (kind) {
    case RecordKind::kKernel: return "kernels_v";
    case RecordKind::kApiCall: return "api_calls_v";
    case RecordKind::kCpuOp: return "cpu_ops_v";
    case RecordKind::kNvtx: return "nvtx_v";
    default: return tableOf(kind);
  }
}

// Time order of slices, with track, lane and row breaking ties so that search moves one at a time.
auto orderKey(const SliceRef& ref) { return std::make_tuple(ref.slice.start_ns, ref.track, ref.lane, ref.slice.row); }

}  // namespace

Result<std::vector<Field>> DetailSource::describe(const SliceRef& ref) {
  std::vector<Field> fields = gui::describe(*timeline_, ref);
  if (!isBulkKind(ref.slice.kind)) return fields;
  const store::Reader& reader = *impl_->readers[timeline_->tracks[ref.track].store];
  const std::string_view table = readableTable(ref.slice.kind);
  std::vector<std::string> columns;
  auto listed = reader.query(fmt::format("PRAGMA table_info({})", table),
                             [&](const store::Row& row) { columns.push_back(row.text(1)); });
  if (!listed) return listed.error();
  const std::set<std::string> names(columns.begin(), columns.end());
  auto read = reader.query(fmt::format("SELECT * FROM {} WHERE id = ?", table), [&](const store::Row& row) {
    for (int c = 0; c < row.columns() && static_cast<std::size_t>(c) < columns.size(); ++c) {
      const std::string& column = columns[static_cast<std::size_t>(c)];
      // An interned id says nothing once the view has resolved it ("name_id" beside "name").
      if (row.isNull(c) || (column.ends_with("_id") && names.count(column.substr(0, column.size() - 3)) > 0)) continue;
      auto field = readableColumn(column, row.text(c));
      if (!field) continue;
      // The store's own text of what the pane already lists (the name) is shown only where it says more.
      const auto same =
          std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.name == field->name; });
      if (same != fields.end() && same->value == field->value) continue;
      if (same != fields.end()) field->name += " in the store";
      fields.push_back(std::move(*field));
    }
  }, {ref.slice.row});
  if (!read) return read.error();
  return fields;
}

Result<std::vector<Flow>> DetailSource::flowsOf(const SliceRef& ref) {
  Impl& impl = *impl_;
  const Track& track = timeline_->tracks[ref.track];
  std::vector<Flow> flows;
  if (ref.slice.kind == RecordKind::kSync) {
    // The GPU work the sync waited for ends during it: fetch that stretch of the process's streams.
    std::vector<bool> wanted(timeline_->tracks.size(), false);
    for (std::uint32_t t = 0; t < timeline_->tracks.size(); ++t) {
      wanted[t] = timeline_->tracks[t].gpu() && timeline_->tracks[t].store == track.store &&
                  timeline_->tracks[t].pid == track.pid;
    }
    const Nanos end_ns = base::saturatingAdd(ref.slice.end_ns, 1);
    DetailWindow window{ref.slice.start_ns, end_ns, {}, {}};
    auto lanes = impl.fetchLanes(ref.slice.start_ns, end_ns, wanted);
    if (!lanes) return lanes.error();
    window.lanes = std::move(lanes).value();
    if (auto flow = impl.syncFlow(window, ref)) flows.push_back(*flow);
    return flows;
  }
  const bool call = ref.slice.kind == RecordKind::kApiCall;
  if (!call && !track.gpu()) return flows;
  // The other end's lane: from memory, or from the store around its start.
  const auto laneAt = [&](std::uint32_t other, Nanos start_ns) -> Result<std::uint32_t> {
    if (!impl.summarised[other]) return laneStartingAt(timeline_->tracks[other].lanes, start_ns);
    std::vector<bool> wanted(timeline_->tracks.size(), false);
    wanted[other] = true;
    auto lanes = impl.fetchLanes(start_ns, base::saturatingAdd(start_ns, 1), wanted);
    if (!lanes) return lanes.error();
    return laneStartingAt((*lanes)[other], start_ns);
  };
  const Nanos shift = timeline_->stores[track.store].shift_ns;
  const store::Reader& reader = *impl.readers[track.store];
  for (const std::string_view gpu_table : {"kernels", "memcpy", "memset"}) {
    if (!call && gpu_table != tableOf(ref.slice.kind)) continue;
    std::vector<std::tuple<std::int64_t, std::int64_t, Nanos, std::int64_t, std::int64_t, Nanos>> rows;
    auto read = reader.query(
        launchJoinSql(gpu_table, call ? FlowSide::kCalls : FlowSide::kWork, call ? "a.id = ?" : "g.id = ?"),
        [&](const store::Row& row) {
          rows.emplace_back(row.integer(0), row.integer(1), row.integer(2) + shift, row.integer(3), row.integer(4),
                            row.integer(5) + shift);
        },
        {ref.slice.row});
    if (!read) return read.error();
    for (const auto& [pid, tid, call_ns, device, stream, gpu_ns] : rows) {
      const auto call_track = impl.hostTrack(track.store, pid, tid, TrackKind::kApiCalls);
      const auto gpu_track = impl.gpuTrack(track.store, device, stream, pid);
      if (!call_track || !gpu_track) continue;
      auto call_lane = call ? Result<std::uint32_t>(ref.lane) : laneAt(*call_track, call_ns);
      if (!call_lane) return call_lane.error();
      auto gpu_lane = call ? laneAt(*gpu_track, gpu_ns) : Result<std::uint32_t>(ref.lane);
      if (!gpu_lane) return gpu_lane.error();
      flows.push_back({{*call_track, *call_lane, call_ns}, {*gpu_track, *gpu_lane, gpu_ns}, FlowKind::kLaunch});
    }
  }
  return flows;
}

Result<std::optional<SliceRef>> DetailSource::findNext(const std::vector<bool>& names,
                                                       const std::optional<SliceRef>& from, bool forward) {
  const Timeline& timeline = *timeline_;
  const auto after = [&](const SliceRef& candidate) {
    if (!from) return true;
    return forward ? orderKey(candidate) > orderKey(*from) : orderKey(candidate) < orderKey(*from);
  };
  const auto better = [&](const std::optional<SliceRef>& best, const SliceRef& candidate) {
    return !best || (forward ? orderKey(candidate) < orderKey(*best) : orderKey(candidate) > orderKey(*best));
  };
  const auto matches = [&](const Slice& slice) { return slice.name < names.size() && names[slice.name]; };

  // Lanes held in memory are searched directly.
  std::optional<SliceRef> best;
  for (std::uint32_t t = 0; t < timeline.tracks.size(); ++t) {
    const auto& lanes = timeline.tracks[t].lanes;
    for (std::uint32_t l = 0; l < lanes.size(); ++l) {
      if (!lanes[l].exact()) continue;
      const auto& slices = lanes[l].slices();
      if (forward) {
        const Nanos start = from ? from->slice.start_ns : std::numeric_limits<Nanos>::min();
        auto it = std::partition_point(slices.begin(), slices.end(), [start](const Slice& s) { return s.start_ns < start; });
        for (; it != slices.end(); ++it) {
          if (matches(*it) && after({t, l, *it})) break;
        }
        if (it != slices.end() && better(best, {t, l, *it})) best = SliceRef{t, l, *it};
      } else {
        const Nanos start = from ? from->slice.start_ns : std::numeric_limits<Nanos>::max();
        auto it = std::partition_point(slices.begin(), slices.end(), [start](const Slice& s) { return s.start_ns <= start; });
        while (it != slices.begin()) {
          --it;
          if (matches(*it) && after({t, l, *it})) {
            if (better(best, {t, l, *it})) best = SliceRef{t, l, *it};
            break;
          }
        }
      }
    }
  }
  if (!std::any_of(impl_->summarised.begin(), impl_->summarised.end(), [](bool s) { return s; })) return best;

  // Summarised lanes: the statistics name the next bucket holding a match anywhere; its slices are
  // read, and buckets are tried in turn while the matches they hold are on the wrong side of `from`.
  Nanos cursor = from ? from->slice.start_ns : (forward ? timeline.begin_ns : timeline.end_ns);
  for (;;) {
    const auto bucket = timeline.stats.nextBucket(names, cursor, forward);
    if (!bucket) return best;
    if (best && (forward ? best->slice.start_ns < bucket->first : best->slice.start_ns >= bucket->second)) return best;
    auto lanes = impl_->fetchLanes(bucket->first, bucket->second, impl_->summarised);
    if (!lanes) return lanes.error();
    bool found = false;
    for (std::uint32_t t = 0; t < lanes->size(); ++t) {
      for (std::uint32_t l = 0; l < (*lanes)[t].size(); ++l) {
        for (const Slice& slice : (*lanes)[t][l].slices()) {
          if (slice.start_ns < bucket->first || slice.start_ns >= bucket->second || !matches(slice)) continue;
          if (!after({t, l, slice}) || !better(best, {t, l, slice})) continue;
          best = SliceRef{t, l, slice};
          found = true;
        }
      }
    }
    if (found) return best;
    cursor = forward ? bucket->second : bucket->first - 1;
  }
}

}  // namespace torchscope::gui
