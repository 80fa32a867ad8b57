// One pass over each bulk table in storage order (sequential reads, no index lookups), rows put in
// start order by a bounded reorder buffer. A row that arrives after rows placed later than it were
// handed on makes the table be read again in index order, which is slower but always right.
#include <algorithm>

#include "Scan.h"

namespace torchscope::gui::detail {

namespace {

bool placedBefore(const BulkRow& a, const BulkRow& b) {
  if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
  return a.end_ns > b.end_ns;
}

constexpr std::string_view kIndexOrder = "start_ns, end_ns DESC";

// Hands rows on in placement order, given rows that arrive nearly in that order.
class StartOrder {
 public:
  explicit StartOrder(std::function<void(const BulkRow&)> emit) : emit_(std::move(emit)) {}

  void push(const BulkRow& row) {
    if (late_) return;
    if (emitted_any_ && placedBefore(row, last_emitted_)) {
      late_ = true;
      return;
    }
    // One comparison a row tells whether the pending rows need sorting at all (they rarely do).
    if (!pending_.empty() && placedBefore(row, pending_.back())) sorted_ = false;
    pending_.push_back(row);
    if (pending_.size() >= 2 * kChunk) release(kChunk);
  }

  // False when a row came too late to be placed: the table must be read in index order.
  [[nodiscard]] bool finish() {
    if (!late_) release(pending_.size());
    return !late_;
  }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 16;

  void release(std::size_t count) {
    if (!sorted_) {
      std::stable_sort(pending_.begin(), pending_.end(), placedBefore);
      sorted_ = true;
      if (emitted_any_ && placedBefore(pending_.front(), last_emitted_)) {
        late_ = true;
        return;
      }
    }
    for (std::size_t i = 0; i < count; ++i) emit_(pending_[i]);
    if (count > 0) {
      last_emitted_ = pending_[count - 1];
      emitted_any_ = true;
    }
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(count));
  }

  std::function<void(const BulkRow&)> emit_;
  std::vector<BulkRow> pending_;
  BulkRow last_emitted_;
  bool sorted_ = true;  // pending_ is in placement order
  bool emitted_any_ = false;
  bool late_ = false;
};

// Reads a whole table in start order: storage order through StartOrder, else index order.
Result<void> readInStartOrder(const store::Reader& reader, const StoreInfo& store, BulkTable table,
                              BulkColumns columns, const std::function<void(const BulkRow&)>& on_row,
                              const std::function<void()>& restart) {
  StartOrder order(on_row);
  auto read = readBulk(reader, store, table, "", {}, "", [&](const BulkRow& row) { order.push(row); }, columns);
  if (!read) return read;
  if (order.finish()) return {};
  restart();
  return readBulk(reader, store, table, "", {}, kIndexOrder, on_row, columns);
}

class Scanner {
 public:
  Scanner(const ScanSetup& setup, std::uint32_t store_index, const store::Reader& reader, ScanResult& result,
          TrackSet& tracks, GpuBusy& busy)
      : setup_(setup), store_index_(store_index), store_((*setup.stores)[store_index]), reader_(reader),
        result_(result), tracks_(tracks), busy_(busy) {}

  Result<void> gpuTables() {
    // Copies and memsets are few: read whole, sorted, then merged into the kernels as those stream in.
    std::vector<BulkRow> copies;
    std::vector<RecordKind> copy_kinds;
    for (const BulkTable table : {BulkTable::kMemset, BulkTable::kMemcpy}) {
      auto read = readBulk(reader_, store_, table, "", {}, "", [&](const BulkRow& row) {
        copies.push_back(row);
        copy_kinds.push_back(bulkSpec(table).kind);
      });
      if (!read) return read;
    }
    std::vector<std::size_t> order(copies.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return placedBefore(copies[a], copies[b]); });
    if (setup_.cancelled && setup_.cancelled()) return cancelledError();

    StatsIndex stats(setup_.origin, setup_.stats_shift);
    std::size_t next_copy = 0;
    const auto feed_copies_before = [&](const BulkRow* kernel) {
      for (; next_copy < order.size() && (kernel == nullptr || placedBefore(copies[order[next_copy]], *kernel));
           ++next_copy) {
        const std::size_t i = order[next_copy];
        addGpu(copies[i], copy_kinds[i], stats);
      }
    };
    auto read = readInStartOrder(
        reader_, store_, BulkTable::kKernels, setup_.columns,
        [&](const BulkRow& kernel) {
          feed_copies_before(&kernel);
          addGpu(kernel, RecordKind::kKernel, stats);
        },
        [&] {
          const std::uint32_t store = store_index_;
          tracks_.drop([store](const TrackKey& key) { return key.store == store && key.gpu; });
          busy_.drop(store);
          stats = StatsIndex(setup_.origin, setup_.stats_shift);
          next_copy = 0;
        });
    if (!read) return read;
    feed_copies_before(nullptr);
    result_.stats.absorb(std::move(stats));
    return {};
  }

  Result<void> hostTables(std::span<const BulkTable> tables) {
    for (const BulkTable table : tables) {
      if (setup_.cancelled && setup_.cancelled()) return cancelledError();
      const BulkSpec& spec = bulkSpec(table);
      // Without names (the overview) only the GPU's operations are counted: the first view needs them.
      const bool with_statistics = setup_.columns == BulkColumns::kAll;
      StatsIndex stats(setup_.origin, setup_.stats_shift);
      auto read = readInStartOrder(
          reader_, store_, table, setup_.columns,
          [&](const BulkRow& row) {
            tracks_.add({store_index_, false, row.pid, row.a, 0, spec.track}, row.slice(spec.kind));
            if (with_statistics)
              stats.add(spec.stat, row.name, row.start_ns, base::spanNanos(row.start_ns, row.end_ns));
          },
          [&] {
            const std::uint32_t store = store_index_;
            const TrackKind kind = spec.track;
            tracks_.drop([store, kind](const TrackKey& key) { return key.store == store && key.kind == kind; });
            stats = StatsIndex(setup_.origin, setup_.stats_shift);
          });
      if (!read) return read;
      result_.stats.absorb(std::move(stats));
    }
    return {};
  }

 private:
  void addGpu(const BulkRow& row, RecordKind kind, StatsIndex& stats) {
    tracks_.add({store_index_, true, row.a, row.b, row.pid, TrackKind::kGpuStream}, row.slice(kind));
    stats.add(bulkSpec(bulkTableOf(kind)).stat, row.name, row.start_ns, base::spanNanos(row.start_ns, row.end_ns));
    busy_.add(store_index_, row);
  }

  const ScanSetup& setup_;
  std::uint32_t store_index_;
  const StoreInfo& store_;
  const store::Reader& reader_;
  ScanResult& result_;
  TrackSet& tracks_;
  GpuBusy& busy_;
};

}  // namespace

Error cancelledError() { return makeError(ErrorCode::kInvalidArgument, "loading was cancelled"); }

TrackSet::TrackSet(Nanos origin, int shift, std::size_t exact_limit)
    : origin_(origin), shift_(shift), exact_limit_(exact_limit) {}

void TrackSet::add(const TrackKey& key, const Slice& slice) {
  if (last_key_ == nullptr || *last_key_ != key) {
    auto [it, inserted] = builders_.try_emplace(key);
    last_key_ = &it->first;
    last_builder_ = &it->second;
  }
  Builder& builder = *last_builder_;
  const std::size_t depth = builder.depths.place(slice);
  while (builder.lanes.size() <= depth) builder.lanes.emplace_back(origin_, shift_, exact_limit_);
  builder.lanes[depth].add(slice);
}

void TrackSet::drop(const std::function<bool(const TrackKey&)>& which) {
  std::erase_if(builders_, [&](const auto& entry) { return which(entry.first); });
  last_key_ = nullptr;
  last_builder_ = nullptr;
}

std::map<TrackKey, std::vector<Lane>> TrackSet::finish() {
  std::map<TrackKey, std::vector<Lane>> out;
  for (auto& [key, builder] : builders_) {
    std::vector<Lane> lanes;
    lanes.reserve(builder.lanes.size());
    for (auto& lane : builder.lanes) lanes.push_back(lane.finish());
    out.emplace(key, std::move(lanes));
  }
  builders_.clear();
  last_key_ = nullptr;
  last_builder_ = nullptr;
  return out;
}

void GpuBusy::add(std::uint32_t store, const BulkRow& row) {
  Device& device = devices_[{store, row.a}];
  if (device.started && row.start_ns > device.busy_until &&
      base::spanNanos(device.busy_until, row.start_ns) >= min_gap_ns_) {
    GpuGap gap;
    gap.store = store;
    gap.gap.device = row.a;
    gap.gap.start_ns = device.busy_until;
    gap.gap.end_ns = row.start_ns;
    gap.gap.pid = row.pid;
    gap.gap.correlation_id = row.correlation_id;
    device.gaps.push_back(std::move(gap));
  }
  device.busy_until = device.started ? std::max(device.busy_until, row.end_ns) : row.end_ns;
  device.started = true;
}

void GpuBusy::drop(std::uint32_t store) {
  std::erase_if(devices_, [store](const auto& entry) { return entry.first.first == store; });
}

std::vector<GpuGap> GpuBusy::finish() {
  std::vector<GpuGap> gaps;
  for (auto& [key, device] : devices_) {
    gaps.insert(gaps.end(), std::make_move_iterator(device.gaps.begin()), std::make_move_iterator(device.gaps.end()));
  }
  devices_.clear();
  return gaps;
}

Result<ScanResult> scanBulk(const ScanSetup& setup, const ScanShare& share) {
  ScanResult result;
  result.stats = StatsIndex(setup.origin, setup.stats_shift);
  TrackSet tracks(setup.origin, setup.shift, setup.exact_limit);
  GpuBusy busy(setup.min_gap_ns);
  const auto& stores = *setup.stores;
  for (std::uint32_t index = 0; index < stores.size(); ++index) {
    if (setup.cancelled && setup.cancelled()) return cancelledError();
    auto reader = store::Reader::open(stores[index].path);
    if (!reader) return reader.error();
    Scanner scanner(setup, index, **reader, result, tracks, busy);
    if (share.gpu_tables) {
      if (auto scanned = scanner.gpuTables(); !scanned) return scanned.error();
    }
    if (auto scanned = scanner.hostTables(share.host_tables); !scanned) return scanned.error();
  }
  result.tracks = tracks.finish();
  result.gaps = busy.finish();
  return result;
}

}  // namespace torchscope::gui::detail
