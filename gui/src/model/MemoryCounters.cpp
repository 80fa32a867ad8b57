// Reading the memory series of the stores as counter lanes: each (series, device) in time order
// through the `memory_samples(series, device, ts_ns)` index, so a series is one index range scan
// and its extent two lookups. Stores written before schema v3 have no memory_samples: no counters.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include "Scan.h"

namespace torchscope::gui::detail {

namespace {

constexpr std::array<CounterSeries, 5> kSeries{{
    {"host.rss", "memory · host RSS"},
    {"cpu.allocated", "memory · CPU allocated (torch)"},
    {"cpu.reserved", "memory · CPU reserved (torch)"},
    {"cuda.allocated", "memory · allocated"},
    {"cuda.reserved", "memory · reserved"},
}};

Result<bool> hasMemorySamples(const store::Reader& reader) {
  bool found = false;
  auto done = reader.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memory_samples'",
                           [&](const store::Row&) { found = true; });
  if (!done) return done.error();
  return found;
}

// The devices with samples of a series, lowest first: one index lookup per device.
Result<std::vector<std::int64_t>> devicesOf(const store::Reader& reader, std::string_view series) {
  std::vector<std::int64_t> devices;
  std::int64_t after = std::numeric_limits<std::int64_t>::min();
  for (;;) {
    std::optional<std::int64_t> next;
    auto done = reader.query(
        "SELECT device FROM memory_samples WHERE series = ?1 AND device > ?2 ORDER BY device LIMIT 1",
        [&](const store::Row& row) { next = row.integer(0); }, {std::string(series), after});
    if (!done) return done.error();
    if (!next) return devices;
    devices.push_back(*next);
    after = *next;
  }
}

// Calls `each` with every (series index, device) of the counter series the store holds.
Result<void> forEachSeries(const store::Reader& reader,
                           const std::function<Result<void>(std::uint32_t, std::int64_t)>& each) {
  auto present = hasMemorySamples(reader);
  if (!present) return present.error();
  if (!*present) return {};
  for (std::uint32_t index = 0; index < kSeries.size(); ++index) {
    auto devices = devicesOf(reader, kSeries[index].series);
    if (!devices) return devices.error();
    for (const std::int64_t device : *devices) {
      if (auto done = each(index, device); !done) return done;
    }
  }
  return {};
}

}  // namespace

std::span<const CounterSeries> counterSeries() { return kSeries; }

Result<void> widenByCounters(const store::Reader& reader, Nanos shift, Nanos& low, Nanos& high) {
  return forEachSeries(reader, [&](std::uint32_t index, std::int64_t device) -> Result<void> {
    for (const char* order : {"", " DESC"}) {
      auto done = reader.query(fmt::format("SELECT ts_ns FROM memory_samples WHERE series = ?1 AND device = ?2 "
                                           "ORDER BY ts_ns{} LIMIT 1",
                                           order),
                               [&](const store::Row& row) {
                                 const Nanos ts = base::saturatingAdd(row.integer(0), shift);
                                 low = std::min(low, ts);
                                 high = std::max(high, ts);
                               },
                               {std::string(kSeries[index].series), device});
      if (!done) return done;
    }
    return {};
  });
}

Result<std::map<TrackKey, CounterLane>> scanCounters(const ScanSetup& setup) {
  std::map<TrackKey, CounterLaneBuilder> builders;
  const auto& stores = *setup.stores;
  for (std::uint32_t store = 0; store < stores.size(); ++store) {
    if (setup.cancelled && setup.cancelled()) return cancelledError();
    auto reader = store::Reader::open(stores[store].path);
    if (!reader) return reader.error();
    const Nanos shift = stores[store].shift_ns;
    auto scanned = forEachSeries(**reader, [&](std::uint32_t index, std::int64_t device) -> Result<void> {
      if (setup.cancelled && setup.cancelled()) return cancelledError();
      return (*reader)->query(
          "SELECT pid, ts_ns, value FROM memory_samples WHERE series = ?1 AND device = ?2 ORDER BY ts_ns",
          [&](const store::Row& row) {
            const std::int64_t pid = row.integer(0);
            const TrackKey key = device < 0 ? TrackKey{store, false, pid, -1, 0, TrackKind::kCounter, index}
                                            : TrackKey{store, true, device, -1, pid, TrackKind::kCounter, index};
            auto it = builders.find(key);
            if (it == builders.end()) {
              it = builders.try_emplace(key, setup.origin, setup.shift, setup.exact_limit).first;
            }
            it->second.add({base::saturatingAdd(row.integer(1), shift), row.integer(2)});
          },
          {std::string(kSeries[index].series), device});
    });
    if (!scanned) return scanned.error();
  }
  std::map<TrackKey, CounterLane> lanes;
  for (auto& [key, builder] : builders) lanes.emplace(key, builder.finish());
  return lanes;
}

}  // namespace torchscope::gui::detail
