// Ingest speed of the store: records per CPU-second (producer and writer thread together) through
// store::Writer (queue, interning, batched transactions on the writer thread), against baselines
// measured in the same run: the same rows inserted by one thread straight into SQLite, one row per
// INSERT (the baseline), 64 rows per INSERT, without a journal, and 3-integer rows (SQLite's floor).
//
// Usage: bench_store_ingest [records=2000000] [repetitions=5] [dir=/tmp]
#include <sqlite3.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "torchscope/store/Writer.h"

#include "ProcessCpu.h"

namespace {

using Clock = std::chrono::steady_clock;
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

void ingestThroughWriter(const std::string& path, std::int64_t records, const std::vector<std::string>& names) {
  auto writer = torchscope::store::Writer::open(path);
  if (!writer) {
    fmt::print(stderr, "{}\n", writer.error().message);
    std::exit(1);
  }
  for (std::int64_t i = 0; i < records; ++i) (*writer)->add(makeKernel(i, names));
  if (auto closed = (*writer)->close(); !closed) {
    fmt::print(stderr, "{}\n", closed.error().message);
    std::exit(1);
  }
}

// What SQLite alone can do, on one thread, one transaction, no index, no interning.
struct RawLayout {
  const char* label;
  int rows_per_statement;  // multi-row INSERT ... VALUES (...), (...): fewer sqlite3_step calls
  bool kernel_columns;     // false: 3 integers per row, the floor of SQLite's per-row cost
  bool journal_off;        // journal_mode OFF, synchronous OFF: no WAL, no crash safety
};

constexpr RawLayout kRawLayouts[] = {
    {"raw SQLite, 1 row/INSERT, WAL (baseline)", 1, true, false},
    {"raw SQLite, 64 rows/INSERT, WAL", 64, true, false},
    {"raw SQLite, 64 rows/INSERT, no journal", 64, true, true},
    {"raw SQLite, 3-integer rows, 64 rows/INSERT, no journal", 64, false, true},
};

void ingestRawSqlite(const std::string& path, std::int64_t records, const std::vector<std::string>& names,
                     const RawLayout& layout) {
  for (const char* suffix : {"", "-wal", "-shm"}) unlink((path + suffix).c_str());
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db, layout.journal_off ? "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
                                      : "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
               nullptr, nullptr, nullptr);
  const int columns = layout.kernel_columns ? 17 : 3;
  sqlite3_exec(db,
               layout.kernel_columns
                   ? "CREATE TABLE kernels (id INTEGER PRIMARY KEY, pid INTEGER, device INTEGER, context INTEGER,"
                     " stream INTEGER, start_ns INTEGER, end_ns INTEGER, name TEXT, correlation_id INTEGER,"
                     " grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER,"
                     " block_z INTEGER, registers_per_thread INTEGER, static_shared_bytes INTEGER,"
                     " dynamic_shared_bytes INTEGER); BEGIN;"
                   : "CREATE TABLE kernels (id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER,"
                     " correlation_id INTEGER); BEGIN;",
               nullptr, nullptr, nullptr);
  auto prepare = [&](int rows) {
    std::string row = "(NULL";
    for (int c = 0; c < columns; ++c) row += ",?";
    row += ")";
    std::string sql = "INSERT INTO kernels VALUES " + row;
    for (int r = 1; r < rows; ++r) sql += "," + row;
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr);
    return stmt;
  };
  sqlite3_stmt* full = prepare(layout.rows_per_statement);
  sqlite3_stmt* single = prepare(1);
  auto bindRow = [&](sqlite3_stmt* stmt, int index, const Kernel& k) {
    if (!layout.kernel_columns) {
      for (auto v : {k.start_ns, k.end_ns, k.correlation_id}) sqlite3_bind_int64(stmt, index++, v);
      return;
    }
    for (auto v : {k.pid, k.device, k.context, k.stream, k.start_ns, k.end_ns}) sqlite3_bind_int64(stmt, index++, v);
    sqlite3_bind_text(stmt, index++, k.name.c_str(), static_cast<int>(k.name.size()), SQLITE_STATIC);
    for (auto v : {k.correlation_id, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
                   k.registers_per_thread, k.static_shared_bytes, k.dynamic_shared_bytes}) {
      sqlite3_bind_int64(stmt, index++, v);
    }
  };
  std::vector<Kernel> rows(static_cast<std::size_t>(layout.rows_per_statement));
  std::int64_t i = 0;
  for (; i + layout.rows_per_statement <= records; i += layout.rows_per_statement) {
    for (int r = 0; r < layout.rows_per_statement; ++r) {
      rows[static_cast<std::size_t>(r)] = makeKernel(i + r, names);
      bindRow(full, 1 + r * columns, rows[static_cast<std::size_t>(r)]);
    }
    sqlite3_step(full);
    sqlite3_reset(full);
  }
  for (; i < records; ++i) {
    const Kernel k = makeKernel(i, names);
    bindRow(single, 1, k);
    sqlite3_step(single);
    sqlite3_reset(single);
  }
  sqlite3_finalize(full);
  sqlite3_finalize(single);
  sqlite3_exec(db, "COMMIT;", nullptr, nullptr, nullptr);
  sqlite3_close(db);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Series {
  std::string label;
  std::vector<double> wall_rates, cpu_rates;
};

void printSeries(const Series& series, const Series& baseline) {
  auto [low, high] = std::minmax_element(series.cpu_rates.begin(), series.cpu_rates.end());
  std::vector<double> ratios;
  for (std::size_t r = 0; r < series.cpu_rates.size(); ++r) ratios.push_back(series.cpu_rates[r] / baseline.cpu_rates[r]);
  fmt::print("{}: median {:.2f} M rec/CPU-s (min {:.2f}, max {:.2f}); wall {:.2f} M rec/s; vs baseline {:.2f}x\n",
             series.label, median(series.cpu_rates) / 1e6, *low / 1e6, *high / 1e6, median(series.wall_rates) / 1e6,
             median(ratios));
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t records = argc > 1 ? std::atoll(argv[1]) : 2'000'000;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string dir = argc > 3 ? argv[3] : "/tmp";
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) {
    names.push_back(fmt::format("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, "
                                "at::detail::Array<char*, {}>>(int, AddFunctor<float>, Array<char*, 3>)",
                                i));
  }
  const std::string store_path = dir + "/bench-ingest.db";
  const std::string raw_path = dir + "/bench-ingest-raw.db";
  std::vector<Series> series{{"store::Writer", {}, {}}};
  for (const auto& layout : kRawLayouts) series.push_back({layout.label, {}, {}});
  for (int r = 0; r < repetitions; ++r) {  // interleaved, so drift hits every variant alike
    auto record = [&](Series& into, Cost cost) {
      into.wall_rates.push_back(static_cast<double>(records) / cost.wall_s);
      into.cpu_rates.push_back(static_cast<double>(records) / cost.cpu_s);
    };
    record(series[0], measure([&] { ingestThroughWriter(store_path, records, names); }));
    for (std::size_t v = 0; v < std::size(kRawLayouts); ++v) {
      record(series[v + 1], measure([&] { ingestRawSqlite(raw_path, records, names, kRawLayouts[v]); }));
    }
    fmt::print("rep {}: store {:.2f} M rec/CPU-s, raw baseline {:.2f} M rec/CPU-s\n", r + 1,
               series[0].cpu_rates.back() / 1e6, series[1].cpu_rates.back() / 1e6);
  }
  fmt::print("records per repetition: {}, repetitions: {}\n", records, repetitions);
  for (const auto& s : series) printSeries(s, series[1]);
  for (const auto& path : {store_path, raw_path}) {
    for (const char* suffix : {"", "-wal", "-shm"}) unlink((path + suffix).c_str());
  }
  return 0;
}
