// Ingest speed of the store: records per second from one producer thread through store::Writer
// (queue, interning, batched transactions on the writer thread), against a baseline measured in
// the same run: the same rows inserted by a single thread with one prepared statement and
// SQLite's fastest settings, with no queue and no interning.
//
// Usage: bench_store_ingest [records=2000000] [repetitions=5] [dir=/tmp]
#include <sqlite3.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "torchscope/store/Writer.h"

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

double ingestThroughWriter(const std::string& path, std::int64_t records, const std::vector<std::string>& names) {
  const auto start = Clock::now();
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
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double ingestRawSqlite(const std::string& path, std::int64_t records, const std::vector<std::string>& names) {
  unlink(path.c_str());
  const auto start = Clock::now();
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db,
               "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
               "CREATE TABLE kernels (id INTEGER PRIMARY KEY, pid INTEGER, device INTEGER, context INTEGER,"
               " stream INTEGER, start_ns INTEGER, end_ns INTEGER, name TEXT, correlation_id INTEGER,"
               " grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER,"
               " block_z INTEGER, registers_per_thread INTEGER, static_shared_bytes INTEGER,"
               " dynamic_shared_bytes INTEGER); BEGIN;",
               nullptr, nullptr, nullptr);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO kernels VALUES (NULL,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &stmt, nullptr);
  for (std::int64_t i = 0; i < records; ++i) {
    const Kernel k = makeKernel(i, names);
    const std::int64_t ints[] = {k.pid, k.device, k.context, k.stream, k.start_ns, k.end_ns};
    int index = 1;
    for (auto v : ints) sqlite3_bind_int64(stmt, index++, v);
    sqlite3_bind_text(stmt, index++, k.name.c_str(), static_cast<int>(k.name.size()), SQLITE_STATIC);
    const std::int64_t rest[] = {k.correlation_id,      k.grid_x,  k.grid_y,          k.grid_z,
                                 k.block_x,             k.block_y, k.block_z,         k.registers_per_thread,
                                 k.static_shared_bytes, k.dynamic_shared_bytes};
    for (auto v : rest) sqlite3_bind_int64(stmt, index++, v);
    sqlite3_step(stmt);
    sqlite3_reset(stmt);
  }
  sqlite3_finalize(stmt);
  sqlite3_exec(db, "COMMIT;", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
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
  std::vector<double> store_rates, raw_rates, ratios;
  for (int r = 0; r < repetitions; ++r) {  // interleaved, so drift hits both alike
    const double store_s = ingestThroughWriter(store_path, records, names);
    const double raw_s = ingestRawSqlite(raw_path, records, names);
    store_rates.push_back(static_cast<double>(records) / store_s);
    raw_rates.push_back(static_cast<double>(records) / raw_s);
    ratios.push_back(raw_s / store_s);
    fmt::print("rep {}: store {:.2f} M rec/s ({:.2f} s), raw SQLite {:.2f} M rec/s ({:.2f} s)\n", r + 1,
               store_rates.back() / 1e6, store_s, raw_rates.back() / 1e6, raw_s);
  }
  auto [store_min, store_max] = std::minmax_element(store_rates.begin(), store_rates.end());
  auto [ratio_min, ratio_max] = std::minmax_element(ratios.begin(), ratios.end());
  fmt::print("records per repetition: {}\n", records);
  fmt::print("store::Writer: median {:.2f} M rec/s (min {:.2f}, max {:.2f})\n", median(store_rates) / 1e6,
             *store_min / 1e6, *store_max / 1e6);
  fmt::print("raw SQLite baseline: median {:.2f} M rec/s\n", median(raw_rates) / 1e6);
  fmt::print("store / baseline throughput: median {:.2f} (min {:.2f}, max {:.2f})\n", median(ratios), *ratio_min,
             *ratio_max);
  unlink(store_path.c_str());
  unlink(raw_path.c_str());
  for (const char* suffix : {"-wal", "-shm"}) unlink((raw_path + suffix).c_str());
  return 0;
}
