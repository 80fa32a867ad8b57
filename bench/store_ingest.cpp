// Ingest speed of the store: records per CPU-second (producer and writer thread together) through
// store::Writer (queue, interning, batched multi-row transactions on the writer thread), to a closed
// store with its indexes and until every record is committed, against variants measured in the same
// run: the same records inserted by one thread straight into SQLite, one row per INSERT (the
// baseline), and the write paths and layouts weighed for issue 15 (rows per INSERT, journal and
// locking modes, page size, the store's own row, a narrow kernel row with a table of launches, a
// times-only row, 3-integer rows as SQLite's floor, the kernel indexes built at close or kept while
// inserting).
//
// Usage: bench_store_ingest [records=2000000] [repetitions=5] [dir=/tmp] [label]
// (label: run only the variant of that label, or those whose label contains it, e.g. under a profiler)
#include <sqlite3.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <functional>
#include <unordered_map>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "torchscope/base/Statistics.h"
#include "torchscope/store/Writer.h"

#include "ProcessCpu.h"

namespace {

using Clock = std::chrono::steady_clock;
using torchscope::base::median;
using torchscope::store::Kernel;

// A realistic kernel record: names repeat (a training step launches the same few hundred kernels).
Kernel makeKernel(std::int64_t i, const std::vector<std::string>& names) {
  Kernel k;
  k.pid = 4242;
  k.device = 0;
  k.context = 1;
  k.stream = 7 + (i % 3);
  k.start_ns = i * 1500;
  k.end_ns = i * 1500 + 900;
  k.name = names[static_cast<std::size_t>(i) % names.size()];
  k.correlation_id = i;
  k.grid_x = 128, k.grid_y = 1, k.grid_z = 1;
  k.block_x = 256, k.block_y = 1, k.block_z = 1;
  k.registers_per_thread = 32;
  k.static_shared_bytes = 0;
  k.dynamic_shared_bytes = 4096;
  return k;
}

struct Cost {
  double wall_s = 0;
  double cpu_s = 0;
};

template <class Work>
Cost measure(Work&& work) {
  const auto wall = Clock::now();
  const double cpu = torchscope::bench::processCpuSeconds();
  work();
  return {std::chrono::duration<double>(Clock::now() - wall).count(), torchscope::bench::processCpuSeconds() - cpu};
}

// Through store::Writer: timed to a closed store with its indexes built, or only until every record
// is committed (what the writer sustains while a job runs; the indexes are built once, at the end).
Cost ingestThroughWriter(const std::string& path, std::int64_t records, const std::vector<std::string>& names,
                         bool time_close) {
  std::unique_ptr<torchscope::store::Writer> writer;
  const Cost committed = measure([&] {
    auto opened = torchscope::store::Writer::open(path);
    if (!opened) {
      fmt::print(stderr, "{}\n", opened.error().message);
      std::exit(1);
    }
    writer = std::move(*opened);
    for (std::int64_t i = 0; i < records; ++i) writer->add(makeKernel(i, names));
    writer->flush();
  });
  const Cost closing = measure([&] {
    if (auto closed = writer->close(); !closed) {
      fmt::print(stderr, "{}\n", closed.error().message);
      std::exit(1);
    }
  });
  return time_close ? Cost{committed.wall_s + closing.wall_s, committed.cpu_s + closing.cpu_s} : committed;
}

// What SQLite alone can do, on one thread, one transaction, no index, no queue.
enum class RowLayout {
  kWideText,      // the 17 kernel columns, the name as text
  kWideInterned,  // the 17 kernel columns, the name as an id into `strings` (the store's kernels table)
  kNarrow,        // pid, device, stream, times, correlation id and the id of a row of `launches` (name, context,
                  // grid, block, registers, shared memory): 7 columns, few distinct launches
  kTimesOnly,     // start, end, correlation id and the id of a row of `launches` holding everything else: 4 columns
  kThreeIntegers  // 3 integers per row: SQLite's per-row floor, not a usable layout
};
enum class Journal { kWal, kWalSyncOff, kOff };
// The store's two kernel indexes (start time; process and correlation id): none, built when the run
// closes (as the store does), or kept up to date row by row.
enum class Indexes { kNone, kAtClose, kWhileInserting };

struct RawVariant {
  const char* label;
  RowLayout layout;
  int rows_per_statement;   // multi-row INSERT ... VALUES (...), (...): fewer sqlite3_step calls
  Journal journal;          // kWal: synchronous NORMAL, as the store; kOff: no journal, no crash safety
  bool no_mutex = false;    // SQLITE_OPEN_NOMUTEX, as the store opens its connection
  bool exclusive = false;   // locking_mode EXCLUSIVE: no shared memory index, but no reader while writing
  int page_size = 0;        // 0: SQLite's default (4096)
  bool without_rowid = false;
  Indexes indexes = Indexes::kNone;
};

constexpr RawVariant kRawVariants[] = {
    {"raw SQLite, 1 row/INSERT, WAL (baseline)", RowLayout::kWideText, 1, Journal::kWal},
    {"raw SQLite, 64 rows/INSERT, WAL", RowLayout::kWideText, 64, Journal::kWal},
    {"raw SQLite, 64 rows/INSERT, no journal", RowLayout::kWideText, 64, Journal::kOff},
    {"raw SQLite, 3-integer rows, 64 rows/INSERT, no journal", RowLayout::kThreeIntegers, 64, Journal::kOff},
    {"raw, store row (name id), 1 row/INSERT, WAL, no mutex", RowLayout::kWideInterned, 1, Journal::kWal, true},
    {"raw, store row, 64 rows/INSERT, WAL, no mutex", RowLayout::kWideInterned, 64, Journal::kWal, true},
    {"raw, store row, 64 rows/INSERT, WAL, synchronous OFF", RowLayout::kWideInterned, 64, Journal::kWalSyncOff,
     true},
    {"raw, store row, 64 rows/INSERT, WAL, locking EXCLUSIVE", RowLayout::kWideInterned, 64, Journal::kWal, true,
     true},
    {"raw, store row, 64 rows/INSERT, WAL, page 16 KiB", RowLayout::kWideInterned, 64, Journal::kWal, true, false,
     16384},
    {"raw, narrow row + launches, 1 row/INSERT, WAL", RowLayout::kNarrow, 1, Journal::kWal, true},
    {"raw, narrow row + launches, 64 rows/INSERT, WAL", RowLayout::kNarrow, 64, Journal::kWal, true},
    {"raw, narrow row + launches, 64 rows/INSERT, WAL, WITHOUT ROWID", RowLayout::kNarrow, 64, Journal::kWal, true,
     false, 0, true},
    {"raw, times-only row + launches, 64 rows/INSERT, WAL", RowLayout::kTimesOnly, 64, Journal::kWal, true},
    {"raw, 3-integer rows, 64 rows/INSERT, WAL", RowLayout::kThreeIntegers, 64, Journal::kWal, true},
    {"raw, store row, 64 rows/INSERT, WAL, indexes at close", RowLayout::kWideInterned, 64, Journal::kWal, true,
     false, 0, false, Indexes::kAtClose},
    {"raw, store row, 64 rows/INSERT, WAL, indexes while inserting", RowLayout::kWideInterned, 64, Journal::kWal,
     true, false, 0, false, Indexes::kWhileInserting},
    {"raw, narrow row + launches, 64 rows/INSERT, WAL, indexes at close", RowLayout::kNarrow, 64, Journal::kWal, true,
     false, 0, false, Indexes::kAtClose},
    {"raw, narrow row + launches, 64 rows/INSERT, WAL, indexes while inserting", RowLayout::kNarrow, 64,
     Journal::kWal, true, false, 0, false, Indexes::kWhileInserting},
};

// The store's kernel indexes (store/src/Schema.cpp).
constexpr const char* kKernelIndexes =
    "CREATE INDEX kernels_time ON kernels(start_ns); CREATE INDEX kernels_correlation ON kernels(pid, correlation_id);";

const char* tableSql(RowLayout layout) {
  switch (layout) {
    case RowLayout::kWideText:
    case RowLayout::kWideInterned:
      return layout == RowLayout::kWideText
                 ? "CREATE TABLE kernels (id INTEGER PRIMARY KEY, pid INTEGER, device INTEGER, context INTEGER,"
                   " stream INTEGER, start_ns INTEGER, end_ns INTEGER, name TEXT, correlation_id INTEGER,"
                   " grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER,"
                   " block_z INTEGER, registers_per_thread INTEGER, static_shared_bytes INTEGER,"
                   " dynamic_shared_bytes INTEGER)"
                 : "CREATE TABLE kernels (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, device INTEGER NOT NULL,"
                   " context INTEGER NOT NULL, stream INTEGER NOT NULL, start_ns INTEGER NOT NULL,"
                   " end_ns INTEGER NOT NULL, name_id INTEGER NOT NULL, correlation_id INTEGER NOT NULL,"
                   " grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL,"
                   " block_x INTEGER NOT NULL, block_y INTEGER NOT NULL, block_z INTEGER NOT NULL,"
                   " registers_per_thread INTEGER NOT NULL, static_shared_bytes INTEGER NOT NULL,"
                   " dynamic_shared_bytes INTEGER NOT NULL)";
    case RowLayout::kNarrow:
      return "CREATE TABLE kernels (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, device INTEGER NOT NULL,"
             " stream INTEGER NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,"
             " correlation_id INTEGER NOT NULL, launch_id INTEGER NOT NULL)";
    case RowLayout::kTimesOnly:
      return "CREATE TABLE kernels (id INTEGER PRIMARY KEY, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,"
             " correlation_id INTEGER NOT NULL, launch_id INTEGER NOT NULL)";
    case RowLayout::kThreeIntegers:
      return "CREATE TABLE kernels (id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER, correlation_id INTEGER)";
  }
  return "";
}

int boundColumns(RowLayout layout) {
  switch (layout) {
    case RowLayout::kWideText:
    case RowLayout::kWideInterned: return 17;
    case RowLayout::kNarrow: return 7;
    case RowLayout::kTimesOnly: return 4;
    case RowLayout::kThreeIntegers: return 3;
  }
  return 0;
}

// The distinct launches (everything of a kernel record but its times, correlation id and, for the narrow
// row, its process, device and stream), numbered as they first appear: a hash lookup per record.
class Launches {
 public:
  explicit Launches(RowLayout layout) : layout_(layout) {}

  std::int64_t id(sqlite3* db, const Kernel& k, std::int64_t name_id) {
    Key key{name_id, k.context, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
            k.registers_per_thread, k.static_shared_bytes, k.dynamic_shared_bytes, -1, -1, -1};
    if (layout_ == RowLayout::kTimesOnly) key.process = {k.pid, k.device, k.stream};
    auto [it, inserted] = ids_.try_emplace(key, static_cast<std::int64_t>(ids_.size()) + 1);
    if (inserted) {
      std::string sql = fmt::format("INSERT INTO launches VALUES ({}", it->second);
      for (auto v : key.values) sql += fmt::format(", {}", v);
      for (auto v : key.process) sql += fmt::format(", {}", v);
      sqlite3_exec(db, (sql + ")").c_str(), nullptr, nullptr, nullptr);
    }
    return it->second;
  }

 private:
  struct Key {
    std::array<std::int64_t, 11> values;
    std::array<std::int64_t, 3> process;
    bool operator==(const Key&) const = default;
  };
  struct Hash {
    std::size_t operator()(const Key& key) const {
      std::size_t h = 0;
      for (auto v : key.values) h = h * 1'000'003 ^ std::hash<std::int64_t>{}(v);
      for (auto v : key.process) h = h * 1'000'003 ^ std::hash<std::int64_t>{}(v);
      return h;
    }
  };
  RowLayout layout_;
  std::unordered_map<Key, std::int64_t, Hash> ids_;
};

void ingestRawSqlite(const std::string& path, std::int64_t records, const std::vector<std::string>& names,
                     const RawVariant& variant) {
  for (const char* suffix : {"", "-wal", "-shm"}) unlink((path + suffix).c_str());
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db,
                  SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | (variant.no_mutex ? SQLITE_OPEN_NOMUTEX : 0), nullptr);
  if (variant.page_size > 0) {
    sqlite3_exec(db, fmt::format("PRAGMA page_size = {}", variant.page_size).c_str(), nullptr, nullptr, nullptr);
  }
  if (variant.exclusive) sqlite3_exec(db, "PRAGMA locking_mode = EXCLUSIVE", nullptr, nullptr, nullptr);
  const char* journal = variant.journal == Journal::kOff ? "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
                        : variant.journal == Journal::kWalSyncOff
                            ? "PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;"
                            : "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;";
  sqlite3_exec(db, journal, nullptr, nullptr, nullptr);
  std::string create = tableSql(variant.layout);
  if (variant.without_rowid) create += " WITHOUT ROWID";
  create += "; CREATE TABLE launches (id INTEGER PRIMARY KEY, name_id, context, grid_x, grid_y, grid_z, block_x,"
            " block_y, block_z, registers_per_thread, static_shared_bytes, dynamic_shared_bytes, pid, device,"
            " stream);";
  if (variant.indexes == Indexes::kWhileInserting) create += kKernelIndexes;
  sqlite3_exec(db, (create + "BEGIN;").c_str(), nullptr, nullptr, nullptr);
  const int columns = boundColumns(variant.layout);
  auto prepare = [&](int rows) {
    // WITHOUT ROWID needs its key bound: the record index.
    std::string row = variant.without_rowid ? "(?" : "(NULL";
    for (int c = 0; c < columns; ++c) row += ",?";
    row += ")";
    std::string sql = "INSERT INTO kernels VALUES " + row;
    for (int r = 1; r < rows; ++r) sql += "," + row;
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr);
    return stmt;
  };
  sqlite3_stmt* full = prepare(variant.rows_per_statement);
  sqlite3_stmt* single = prepare(1);
  const int row_parameters = columns + (variant.without_rowid ? 1 : 0);
  Launches launches(variant.layout);
  // The name's id in `strings`, as the store's interner would give it.
  auto nameId = [&](std::int64_t i) {
    return static_cast<std::int64_t>(static_cast<std::size_t>(i) % names.size()) + 1;
  };
  auto bindRow = [&](sqlite3_stmt* stmt, int index, const Kernel& k, std::int64_t i) {
    auto bindAll = [&](std::initializer_list<std::int64_t> values) {
      for (auto v : values) sqlite3_bind_int64(stmt, index++, v);
    };
    if (variant.without_rowid) bindAll({i + 1});
    switch (variant.layout) {
      case RowLayout::kWideText:
        bindAll({k.pid, k.device, k.context, k.stream, k.start_ns, k.end_ns});
        sqlite3_bind_text(stmt, index++, k.name.c_str(), static_cast<int>(k.name.size()), SQLITE_STATIC);
        bindAll({k.correlation_id, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
                 k.registers_per_thread, k.static_shared_bytes, k.dynamic_shared_bytes});
        return;
      case RowLayout::kWideInterned:
        bindAll({k.pid, k.device, k.context, k.stream, k.start_ns, k.end_ns, nameId(i), k.correlation_id, k.grid_x,
                 k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z, k.registers_per_thread, k.static_shared_bytes,
                 k.dynamic_shared_bytes});
        return;
      case RowLayout::kNarrow:
        bindAll({k.pid, k.device, k.stream, k.start_ns, k.end_ns, k.correlation_id, launches.id(db, k, nameId(i))});
        return;
      case RowLayout::kTimesOnly:
        bindAll({k.start_ns, k.end_ns, k.correlation_id, launches.id(db, k, nameId(i))});
        return;
      case RowLayout::kThreeIntegers:
        bindAll({k.start_ns, k.end_ns, k.correlation_id});
        return;
    }
  };
  // Text is bound SQLITE_STATIC: the rows live until the statement has run.
  std::vector<Kernel> rows(static_cast<std::size_t>(variant.rows_per_statement));
  std::int64_t i = 0;
  for (; i + variant.rows_per_statement <= records; i += variant.rows_per_statement) {
    for (int r = 0; r < variant.rows_per_statement; ++r) {
      rows[static_cast<std::size_t>(r)] = makeKernel(i + r, names);
      bindRow(full, 1 + r * row_parameters, rows[static_cast<std::size_t>(r)], i + r);
    }
    sqlite3_step(full);
    sqlite3_reset(full);
  }
  for (; i < records; ++i) {
    rows[0] = makeKernel(i, names);
    bindRow(single, 1, rows[0], i);
    sqlite3_step(single);
    sqlite3_reset(single);
  }
  sqlite3_finalize(full);
  sqlite3_finalize(single);
  sqlite3_exec(db, "COMMIT;", nullptr, nullptr, nullptr);
  if (variant.indexes == Indexes::kAtClose) sqlite3_exec(db, kKernelIndexes, nullptr, nullptr, nullptr);
  sqlite3_close(db);
}

struct Series {
  std::string label;
  std::vector<double> wall_rates, cpu_rates;
};

void printSeries(const Series& series, const Series* baseline) {
  auto [low, high] = std::minmax_element(series.cpu_rates.begin(), series.cpu_rates.end());
  std::string versus;
  if (baseline) {
    std::vector<double> ratios;
    for (std::size_t r = 0; r < series.cpu_rates.size(); ++r) {
      ratios.push_back(series.cpu_rates[r] / baseline->cpu_rates[r]);
    }
    versus = fmt::format("; vs baseline {:.2f}x", median(ratios));
  }
  fmt::print("{}: median {:.2f} M rec/CPU-s (min {:.2f}, max {:.2f}); wall {:.2f} M rec/s{}\n", series.label,
             median(series.cpu_rates) / 1e6, *low / 1e6, *high / 1e6, median(series.wall_rates) / 1e6, versus);
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t records = argc > 1 ? std::atoll(argv[1]) : 2'000'000;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string dir = argc > 3 ? argv[3] : "/tmp";
  const std::string only = argc > 4 ? argv[4] : "";
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) {
    names.push_back(fmt::format("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, "
                                "at::detail::Array<char*, {}>>(int, AddFunctor<float>, Array<char*, 3>)",
                                i));
  }
  const std::string store_path = dir + "/bench-ingest.db";
  const std::string raw_path = dir + "/bench-ingest-raw.db";
  struct Variant {
    Series series;
    std::function<Cost()> run;
  };
  std::vector<Variant> variants;
  variants.push_back({{"store::Writer, to a closed store (indexes built)", {}, {}},
                      [&] { return ingestThroughWriter(store_path, records, names, true); }});
  variants.push_back({{"store::Writer, records committed (before close)", {}, {}},
                      [&] { return ingestThroughWriter(store_path, records, names, false); }});
  for (const auto& raw : kRawVariants) {
    variants.push_back(
        {{raw.label, {}, {}}, [&] { return measure([&] { ingestRawSqlite(raw_path, records, names, raw); }); }});
  }
  // A fourth argument keeps the variant of that label, or else those whose label contains it (to
  // profile one alone).
  const bool exact =
      std::any_of(variants.begin(), variants.end(), [&](const Variant& v) { return v.series.label == only; });
  std::erase_if(variants, [&](const Variant& v) {
    return exact ? v.series.label != only : v.series.label.find(only) == std::string::npos;
  });
  for (int r = 0; r < repetitions; ++r) {  // interleaved, so drift hits every variant alike
    for (auto& variant : variants) {
      const Cost cost = variant.run();
      variant.series.wall_rates.push_back(static_cast<double>(records) / cost.wall_s);
      variant.series.cpu_rates.push_back(static_cast<double>(records) / cost.cpu_s);
    }
    fmt::print("rep {}:", r + 1);
    for (const auto& variant : variants) fmt::print(" {:.2f}", variant.series.cpu_rates.back() / 1e6);
    fmt::print(" M rec/CPU-s\n");
  }
  fmt::print("records per repetition: {}, repetitions: {}\n", records, repetitions);
  const auto baseline = std::find_if(variants.begin(), variants.end(),
                                     [](const Variant& v) { return v.series.label.ends_with("(baseline)"); });
  for (const auto& variant : variants) {
    printSeries(variant.series, baseline == variants.end() ? nullptr : &baseline->series);
  }
  for (const auto& path : {store_path, raw_path}) {
    for (const char* suffix : {"", "-wal", "-shm"}) unlink((path + suffix).c_str());
  }
  return 0;
}
