// Reader: typed, read-only access to a store, used by the analyzer, the GUI and the CLI.
// A store that is still being written can be read; it shows what was committed so far.
//
// Error contract: open() fails with kNotFound for a missing file, kNotTorchscope for any file
// that is not a torchscope store, kVersion for a store from a newer schema, kCorrupt for a
// damaged one. load() fails only on SQLite errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "torchscope/base/Result.h"
#include "torchscope/store/Records.h"

namespace torchscope::store {

// Restricts load() to rows that overlap [begin_ns, end_ns) (rows with one timestamp: that fall in it).
struct TimeRange {
  base::Nanos begin_ns = 0;
  base::Nanos end_ns = 0;
};

struct LoadOptions {
  std::optional<TimeRange> range;
  std::optional<std::int64_t> limit;
};

// One row of a query() result; columns are numbered from 0.
class Row {
 public:
  virtual ~Row() = default;
  [[nodiscard]] virtual int columns() const = 0;
  [[nodiscard]] virtual bool isNull(int column) const = 0;
  [[nodiscard]] virtual std::int64_t integer(int column) const = 0;
  [[nodiscard]] virtual double real(int column) const = 0;
  [[nodiscard]] virtual std::string text(int column) const = 0;
};

using QueryParam = std::variant<std::int64_t, double, std::string>;

class Reader {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Reader>> open(const std::string& path);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  [[nodiscard]] const std::string& path() const;
  [[nodiscard]] std::int32_t schemaVersion() const;
  [[nodiscard]] Result<RunInfo> run() const;

  // Rows per table, keyed by table name ("kernels", "memcpy", ... see tableNames()).
  [[nodiscard]] Result<std::map<std::string, std::int64_t>> counts() const;
  // Earliest start and latest end over every timed table; nullopt for an empty store.
  [[nodiscard]] Result<std::optional<TimeRange>> timeSpan() const;

  // All rows of one record type in time order (or insertion order for untimed tables): any table but the run's.
  template <RowRecord T>
  [[nodiscard]] Result<std::vector<T>> load(const LoadOptions& options = {}) const {
    std::vector<T> rows;
    if (auto loaded = loadInto(schema::IndexOf<T, RowRecords>::value, &rows, options); !loaded) return loaded.error();
    return rows;
  }

  // Runs read-only SQL over the store (tables and views of docs/FORMAT.md) with `?` parameters
  // bound in order, calling on_row for each result row. For aggregations that must stay in SQL.
  [[nodiscard]] Result<void> query(std::string_view sql, const std::function<void(const Row&)>& on_row,
                                   const std::vector<QueryParam>& params = {}) const;

  class Impl;

 private:
  explicit Reader(std::unique_ptr<Impl> impl);
  // Fills *rows, a std::vector of RowRecords' type number `type`.
  [[nodiscard]] Result<void> loadInto(std::size_t type, void* rows, const LoadOptions& options) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace torchscope::store
