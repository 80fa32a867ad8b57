// Loads stores into a Timeline: the small tables whole through store::Reader, the bulk tables by
// two scans that run side by side (GPU work and CUDA API calls on a second thread, CPU ops, NVTX and
// then the memory counters on this one), then the tracks in order, the run's extent, what the first
// view frames and why the GPUs sat idle. A large store is scanned twice: first for an overview
// (where and when each row lies, into coarse lanes), then for the full model.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <thread>
#include <unordered_map>

#include "Scan.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/gui/Text.h"
#include "torchscope/gui/Timeline.h"
#include "torchscope/store/Reader.h"

namespace torchscope::gui {

namespace {

using detail::TrackKey;

class Names {
 public:
  explicit Names(std::vector<std::string>& names) : names_(names) { intern("(unnamed)"); }
  std::uint32_t intern(std::string name) {
    const auto [it, inserted] = ids_.try_emplace(name, static_cast<std::uint32_t>(names_.size()));
    if (inserted) names_.push_back(std::move(name));
    return it->second;
  }

 private:
  std::vector<std::string>& names_;
  std::unordered_map<std::string, std::uint32_t> ids_;
};

template <class T>
Result<void> loadAll(const store::Reader& reader, std::vector<T>& out, std::uint32_t store,
                     std::vector<std::uint32_t>* stores, const std::function<void(T&)>& shift = {}) {
  auto rows = reader.load<T>();
  if (!rows) return rows.error();
  for (T& row : *rows) {
    if (shift) shift(row);
    out.push_back(std::move(row));
    if (stores != nullptr) stores->push_back(store);
  }
  return {};
}

Result<void> loadSmallTables(const store::Reader& reader, std::uint32_t store, Nanos shift, Records& r) {
  const auto span = [shift](auto& row) {
    row.start_ns = base::saturatingAdd(row.start_ns, shift);
    row.end_ns = base::saturatingAdd(row.end_ns, shift);
  };
  const auto instant = [shift](auto& row) { row.ts_ns = base::saturatingAdd(row.ts_ns, shift); };
  for (auto loaded : {loadAll<store::Process>(reader, r.processes, store, &r.process_stores),
                      loadAll<store::Thread>(reader, r.threads, store, &r.thread_stores),
                      loadAll<store::Device>(reader, r.devices, store, &r.device_stores),
                      loadAll<store::Step>(reader, r.steps, store, nullptr, span),
                      loadAll<store::Sync>(reader, r.syncs, store, &r.sync_stores, span),
                      loadAll<store::Collective>(reader, r.collectives, store, &r.collective_stores, span),
                      loadAll<store::Compile>(reader, r.compiles, store, nullptr, span),
                      loadAll<store::GraphBreak>(reader, r.graph_breaks, store, nullptr, instant),
                      loadAll<store::Recompile>(reader, r.recompiles, store, nullptr, instant),
                      loadAll<store::FixExperiment>(reader, r.fix_experiments, store, nullptr)}) {
    if (!loaded) return loaded;
  }
  auto findings = analyzer::loadFindings(reader);
  if (!findings) return findings.error();
  r.findings.insert(r.findings.end(), std::make_move_iterator(findings->begin()),
                    std::make_move_iterator(findings->end()));
  return {};
}

// The store's interned strings and the labels of its copies and memsets, as Timeline names.
Result<void> loadNames(const store::Reader& reader, StoreInfo& store, Names& names) {
  // The writer numbers strings from 1 without gaps: an id far past the table's size is a damaged store's, and its
  // rows stay unnamed rather than the name table being sized by it.
  std::int64_t rows = 0;
  auto counted = reader.query("SELECT count(*) FROM strings", [&](const store::Row& row) { rows = row.integer(0); });
  if (!counted) return counted;
  auto strings = reader.query(
      "SELECT id, value FROM strings WHERE id BETWEEN 0 AND ?",
      [&](const store::Row& row) {
        const auto id = static_cast<std::size_t>(row.integer(0));
        if (store.string_names.size() <= id) store.string_names.resize(id + 1, 0);
        store.string_names[id] = names.intern(row.text(1));
      },
      {2 * rows + 1024});
  if (!strings) return strings;
  for (const auto table : {detail::BulkTable::kMemcpy, detail::BulkTable::kMemset}) {
    auto labels = reader.query(
        fmt::format("SELECT DISTINCT {} FROM {}", detail::labelSql(table), detail::bulkSpec(table).table),
        [&](const store::Row& row) { store.labels.emplace(row.text(0), names.intern(row.text(0))); });
    if (!labels) return labels;
  }
  return {};
}

// Earliest and latest start over the bulk tables, through their start_ns indexes.
Result<void> widenByBulkStarts(const store::Reader& reader, Nanos shift, Nanos& low, Nanos& high) {
  for (const auto table : {detail::BulkTable::kKernels, detail::BulkTable::kMemcpy, detail::BulkTable::kMemset,
                           detail::BulkTable::kApiCalls, detail::BulkTable::kCpuOps, detail::BulkTable::kNvtx}) {
    for (const char* aggregate : {"min", "max"}) {
      auto done = reader.query(fmt::format("SELECT {}(start_ns) FROM {}", aggregate, detail::bulkSpec(table).table),
                               [&](const store::Row& row) {
                                 if (row.isNull(0)) return;
                                 const Nanos start = base::saturatingAdd(row.integer(0), shift);
                                 low = std::min(low, start);
                                 high = std::max(high, start);
                               });
      if (!done) return done;
    }
  }
  return {};
}

// About how many rows the bulk tables hold: their largest id, an index lookup each (the writer
// appends, so ids count rows).
Result<std::uint64_t> bulkRows(const store::Reader& reader) {
  std::uint64_t rows = 0;
  for (const auto table : {detail::BulkTable::kKernels, detail::BulkTable::kMemcpy, detail::BulkTable::kMemset,
                           detail::BulkTable::kApiCalls, detail::BulkTable::kCpuOps, detail::BulkTable::kNvtx}) {
    auto done = reader.query(fmt::format("SELECT max(id) FROM {}", detail::bulkSpec(table).table),
                             [&](const store::Row& row) {
                               if (!row.isNull(0)) rows += static_cast<std::uint64_t>(std::max<std::int64_t>(0, row.integer(0)));
                             });
    if (!done) return done.error();
  }
  return rows;
}

std::string stepLabel(const store::Step& step) { return fmt::format("step {}", step.index); }

std::string syncLabel(const store::Sync& sync) {
  std::string label = sync.op.empty() ? fmt::format("sync ({})", sync.sync_kind) : sync.op;
  if (!sync.file.empty()) label += fmt::format(" @ {}", sourceLocation(baseName(sync.file), sync.line));
  return label;
}

std::string compileLabel(const store::Compile& compile) {
  std::string label = fmt::format("compile {} [{}/{}]", compile.co_name, compile.frame_id, compile.frame_compile_id);
  if (!compile.status.empty() && compile.status != "ok") label += fmt::format(" ({})", compile.status);
  return label;
}

// Tracks of the small tables: steps, syncs and collectives per thread, compiles and their events per process.
std::map<TrackKey, std::vector<Lane>> smallTracks(const Records& r, Names& names, StatsIndex& stats) {
  std::map<TrackKey, std::vector<Slice>> slices;
  const auto add = [&](std::uint32_t store, std::int64_t pid, std::int64_t tid, TrackKind kind, Nanos start,
                       Nanos end, std::string label, RecordKind record, std::size_t index) {
    const std::uint32_t name = names.intern(std::move(label));
    slices[{store, false, pid, tid, 0, kind}].push_back(
        {start, std::max(start, end), static_cast<std::int64_t>(index), name, record});
    return name;
  };
  // Without one store per row, the rows of the small tables belong to the store whose processes list them.
  std::map<std::int64_t, std::uint32_t> store_of_pid;
  for (std::size_t i = 0; i < r.processes.size(); ++i) store_of_pid.emplace(r.processes[i].pid, r.process_stores[i]);
  const auto storeOf = [&](std::int64_t pid) {
    const auto it = store_of_pid.find(pid);
    return it == store_of_pid.end() ? std::uint32_t{0} : it->second;
  };
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const auto& step = r.steps[i];
    add(storeOf(step.pid), step.pid, step.tid, TrackKind::kSteps, step.start_ns, step.end_ns, stepLabel(step),
        RecordKind::kStep, i);
  }
  for (std::size_t i = 0; i < r.syncs.size(); ++i) {
    const auto& sync = r.syncs[i];
    const std::uint32_t name = add(r.sync_stores[i], sync.pid, sync.tid, TrackKind::kSyncs, sync.start_ns,
                                   sync.end_ns, syncLabel(sync), RecordKind::kSync, i);
    stats.add(StatKind::kSync, name, sync.start_ns, base::spanNanos(sync.start_ns, sync.end_ns));
  }
  for (std::size_t i = 0; i < r.collectives.size(); ++i) {
    const auto& collective = r.collectives[i];
    const std::uint32_t name = add(r.collective_stores[i], collective.pid, collective.tid, TrackKind::kCollectives,
                                   collective.start_ns, collective.end_ns, collective.name, RecordKind::kCollective, i);
    stats.add(StatKind::kCollective, name, collective.start_ns,
              base::spanNanos(collective.start_ns, collective.end_ns));
  }
  for (std::size_t i = 0; i < r.compiles.size(); ++i) {
    const auto& compile = r.compiles[i];
    add(storeOf(compile.pid), compile.pid, -1, TrackKind::kCompiles, compile.start_ns, compile.end_ns,
        compileLabel(compile), RecordKind::kCompile, i);
  }
  for (std::size_t i = 0; i < r.graph_breaks.size(); ++i) {
    const auto& graph_break = r.graph_breaks[i];
    add(storeOf(graph_break.pid), graph_break.pid, -1, TrackKind::kCompileEvents, graph_break.ts_ns, graph_break.ts_ns,
        fmt::format("graph break: {}", graph_break.break_type), RecordKind::kGraphBreak, i);
  }
  for (std::size_t i = 0; i < r.recompiles.size(); ++i) {
    const auto& recompile = r.recompiles[i];
    add(storeOf(recompile.pid), recompile.pid, -1, TrackKind::kCompileEvents, recompile.ts_ns, recompile.ts_ns,
        fmt::format("recompile {} ({})", recompile.co_name, recompile.cause), RecordKind::kRecompile, i);
  }
  std::map<TrackKey, std::vector<Lane>> tracks;
  for (auto& [key, track_slices] : slices) tracks.emplace(key, buildLanes(std::move(track_slices)));
  return tracks;
}

// GPU operations (kernels, copies, memsets) that start in [begin_ns, end_ns), to the statistics' buckets.
std::uint64_t gpuOperationsIn(const Timeline& timeline, Nanos begin_ns, Nanos end_ns) {
  std::uint64_t count = 0;
  for (const NameTotal& name : timeline.stats.totals(begin_ns, end_ns)) {
    if (name.kind == StatKind::kKernel || name.kind == StatKind::kMemcpy || name.kind == StatKind::kMemset) {
      count += name.count;
    }
  }
  return count;
}

// The first view: where the GPUs worked, when there is GPU work (an imported trace often starts with
// seconds of CUDA initialisation before any kernel), else the whole run. While one idle stretch of
// the GPUs takes most of the framed span (a warm-up, then seconds of host work before the measured
// iterations), the side of it with more GPU operations is framed: otherwise that work would be a
// sliver at one edge.
Focus chooseFocus(const Timeline& timeline) {
  constexpr int kMaxIdleSkips = 8;
  Nanos low = std::numeric_limits<Nanos>::max();
  Nanos high = std::numeric_limits<Nanos>::min();
  for (const Track& track : timeline.tracks) {
    if (!track.gpu()) continue;
    for (const Lane& lane : track.lanes) {
      if (lane.count() == 0) continue;
      low = std::min(low, lane.beginNs());
      high = std::max(high, lane.endNs());
    }
  }
  if (low > high) return {timeline.begin_ns, timeline.end_ns, "the whole run"};
  high = std::max(high, base::saturatingAdd(low, 1));
  const auto length = [](const GpuGap& gap) { return base::spanNanos(gap.gap.start_ns, gap.gap.end_ns); };
  // Range ends of the statistics are rounded to buckets: a bucket of margin inside the stretch.
  const Nanos margin = timeline.stats.bucketNs();
  Nanos skipped = 0;
  for (int skip = 0; skip < kMaxIdleSkips; ++skip) {
    const GpuGap* longest = nullptr;
    for (const GpuGap& gap : timeline.gaps) {
      if (gap.gap.start_ns < low || gap.gap.end_ns > high) continue;
      if (longest == nullptr || length(gap) > length(*longest)) longest = &gap;
    }
    if (longest == nullptr || length(*longest) <= base::spanNanos(low, high) / 2) break;
    const Nanos idle_from = longest->gap.start_ns;
    const Nanos idle_to = longest->gap.end_ns;
    if (gpuOperationsIn(timeline, base::saturatingAdd(idle_from, margin), base::saturatingSub(idle_to, margin)) > 0) {
      break;  // another GPU worked
    }
    if (gpuOperationsIn(timeline, idle_to, base::saturatingAdd(high, 1)) >= gpuOperationsIn(timeline, low, idle_from)) {
      low = idle_to;
    } else {
      high = idle_from;
    }
    skipped = base::saturatingAdd(skipped, length(*longest));
  }
  if (skipped == 0) return {low, high, "the GPUs' work"};
  return {low, std::max(high, base::saturatingAdd(low, 1)),
          fmt::format("the GPUs' busiest work ({} of idle GPU left out)", formatDuration(skipped))};
}

void setExtent(Timeline& timeline) {
  Nanos low = std::numeric_limits<Nanos>::max();
  Nanos high = std::numeric_limits<Nanos>::min();
  for (const Track& track : timeline.tracks) {
    for (const Lane& lane : track.lanes) {
      if (lane.count() == 0) continue;
      low = std::min(low, lane.beginNs());
      high = std::max(high, lane.endNs());
    }
    if (track.counter.count() > 0) {
      low = std::min(low, track.counter.beginNs());
      high = std::max(high, track.counter.endNs());
    }
  }
  if (low > high && !timeline.stores.empty()) {
    low = timeline.stores.front().run.start_ns;
    high = std::max(timeline.stores.front().run.end_ns, base::saturatingAdd(low, 1));
  }
  if (low > high) low = high = 0;
  timeline.begin_ns = low;
  timeline.end_ns = std::max(high, base::saturatingAdd(low, 1));
}

// What one pass over the bulk tables produced, both threads' shares merged.
struct BulkPass {
  std::map<TrackKey, std::vector<Lane>> tracks;
  StatsIndex stats;
  std::vector<GpuGap> gaps;
  std::map<TrackKey, CounterLane> counters;
};

Result<BulkPass> scanBulkTables(const detail::ScanSetup& setup) {
  std::optional<Result<detail::ScanResult>> gpu;
  std::thread gpu_thread([&] { gpu.emplace(detail::scanBulk(setup, detail::kGpuShare)); });
  auto cpu = detail::scanBulk(setup, detail::kCpuShare);
  auto counters = cpu ? detail::scanCounters(setup) : Result<std::map<TrackKey, CounterLane>>(cpu.error());
  gpu_thread.join();
  if (!cpu) return cpu.error();
  if (!counters) return counters.error();
  if (!*gpu) return gpu->error();
  if (setup.cancelled && setup.cancelled()) return detail::cancelledError();
  BulkPass pass;
  pass.stats = StatsIndex(setup.origin, setup.stats_shift);
  for (auto* scan : {&cpu.value(), &gpu->value()}) {
    pass.tracks.merge(scan->tracks);
    pass.stats.absorb(std::move(scan->stats));
  }
  pass.gaps = std::move(gpu->value().gaps);
  pass.counters = std::move(counters).value();
  return pass;
}

// Fills a timeline that holds the small tables and their tracks with a pass over the bulk tables:
// tracks in order, extent, statistics, gaps and the first view.
void arrange(Timeline& timeline, std::map<TrackKey, std::vector<Lane>> small, BulkPass pass) {
  small.merge(pass.tracks);
  timeline.stats.absorb(std::move(pass.stats));
  timeline.stats.finish();
  timeline.gaps = std::move(pass.gaps);
  std::sort(timeline.gaps.begin(), timeline.gaps.end(), [](const GpuGap& a, const GpuGap& b) {
    return std::tie(a.store, a.gap.device, a.gap.start_ns) < std::tie(b.store, b.gap.device, b.gap.start_ns);
  });
  detail::assembleTracks(timeline, std::move(small), std::move(pass.counters));
  setExtent(timeline);
  timeline.focus = chooseFocus(timeline);
}

// The overview: every row read, but only where and when it lies (BulkColumns::kSpans), into coarse
// lanes. Tracks, lanes, extent and first view come out as the full model's: the first view is
// chosen from the same gaps and the same GPU operation counts per statistics bucket. Its slices
// have no names yet, so it carries no statistics and no gaps (their causes need the launches).
Result<std::shared_ptr<const Timeline>> readOverview(const Timeline& base, std::map<TrackKey, std::vector<Lane>> small,
                                                     detail::ScanSetup setup, int shift) {
  setup.shift = shift;
  setup.columns = detail::BulkColumns::kSpans;
  auto pass = scanBulkTables(setup);
  if (!pass) return pass.error();
  auto overview = std::make_shared<Timeline>(base);
  overview->resolution = Resolution::kOverview;
  overview->detail_shift = shift;
  arrange(*overview, std::move(small), std::move(pass).value());
  overview->stats = StatsIndex(setup.origin, setup.stats_shift);
  overview->stats.finish();
  overview->gaps.clear();
  return std::shared_ptr<const Timeline>(std::move(overview));
}

}  // namespace

Result<std::shared_ptr<const Timeline>> loadTimeline(const std::vector<std::string>& paths,
                                                     const std::function<bool()>& cancelled, const LoadLimits& limits,
                                                     const OverviewReady& on_overview) {
  auto timeline = std::make_shared<Timeline>();
  Names names(timeline->names);
  Nanos low = std::numeric_limits<Nanos>::max();
  Nanos high = std::numeric_limits<Nanos>::min();
  Nanos anchor = 0;  // wall minus monotonic time of the first store
  std::uint64_t bulk_rows = 0;
  for (std::uint32_t index = 0; index < paths.size(); ++index) {
    if (cancelled && cancelled()) return detail::cancelledError();
    auto reader = store::Reader::open(paths[index]);
    if (!reader) return reader.error();
    StoreInfo store;
    store.path = paths[index];
    if (auto run = (*reader)->run(); run) store.run = std::move(run).value();
    // Other stores are placed on the first one's clock by their wall-clock anchors.
    const Nanos offset =
        store.run.start_wall_ns != 0 ? base::saturatingSub(store.run.start_wall_ns, store.run.start_ns) : 0;
    if (index == 0) anchor = offset;
    store.shift_ns = index == 0 || store.run.start_wall_ns == 0 ? 0 : base::saturatingSub(offset, anchor);
    if (auto named = loadNames(**reader, store, names); !named) return named.error();
    if (auto small = loadSmallTables(**reader, index, store.shift_ns, timeline->records); !small) return small.error();
    if (auto widened = widenByBulkStarts(**reader, store.shift_ns, low, high); !widened) return widened.error();
    if (auto widened = detail::widenByCounters(**reader, store.shift_ns, low, high); !widened) return widened.error();
    auto rows = bulkRows(**reader);
    if (!rows) return rows.error();
    bulk_rows += *rows;
    timeline->stores.push_back(std::move(store));
  }
  const auto widen = [&](Nanos start, Nanos end) {
    low = std::min(low, start);
    high = std::max(high, end);
  };
  for (const auto& step : timeline->records.steps) widen(step.start_ns, step.end_ns);
  for (const auto& sync : timeline->records.syncs) widen(sync.start_ns, sync.end_ns);
  for (const auto& collective : timeline->records.collectives) widen(collective.start_ns, collective.end_ns);
  for (const auto& compile : timeline->records.compiles) widen(compile.start_ns, compile.end_ns);
  if (low > high) low = high = 0;

  // The finest summary bucket: a power of two about 2^-buckets_log2 of the run.
  const Nanos span = std::max<Nanos>(1, base::spanNanos(low, high));
  const auto finestShift = [span](int buckets_log2) {
    int shift = 0;
    while (shift < 62 && (span >> shift) >= (Nanos{1} << buckets_log2)) ++shift;
    return shift;
  };
  const int shift = finestShift(limits.summary_buckets_log2);
  timeline->detail_shift = shift;
  // Stats buckets are four times the finest summary bucket: 1/65536 of the run by default.
  const int stats_shift = shift + 2;
  timeline->stats = StatsIndex(low, stats_shift);
  auto small = smallTracks(timeline->records, names, timeline->stats);

  detail::ScanSetup setup{&timeline->stores, low, shift, stats_shift, limits.exact_slices_per_lane, cancelled};
  setup.min_gap_ns = Nanos{1} << shift;
  if (on_overview && bulk_rows > limits.overview_from_rows) {
    detail::ScanSetup coarse = setup;
    coarse.exact_limit = limits.overview_exact_slices_per_lane;
    auto overview =
        readOverview(*timeline, small, std::move(coarse), std::max(shift, finestShift(limits.overview_buckets_log2)));
    if (!overview) return overview.error();
    on_overview(std::move(overview).value());
  }
  auto pass = scanBulkTables(setup);
  if (!pass) return pass.error();
  arrange(*timeline, std::move(small), std::move(pass).value());
  if (auto explained = detail::explainGaps(*timeline, limits.explained_gaps); !explained) return explained.error();
  if (cancelled && cancelled()) return detail::cancelledError();
  return std::shared_ptr<const Timeline>(std::move(timeline));
}

}  // namespace torchscope::gui
