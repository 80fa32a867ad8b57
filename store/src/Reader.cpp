#include "torchscope/store/Reader.h"

#include <set>

#include "Sqlite.h"
#include "StoreFile.h"
#include "Tables.h"
#include "torchscope/store/Schema.h"

namespace torchscope::store {

namespace {

void readField(const sqlite::Statement& stmt, int index, std::int64_t& out) { out = stmt.columnInt(index); }
void readField(const sqlite::Statement& stmt, int index, double& out) { out = stmt.columnDouble(index); }
void readField(const sqlite::Statement& stmt, int index, bool& out) { out = stmt.columnInt(index) != 0; }
void readField(const sqlite::Statement& stmt, int index, std::string& out) { out = stmt.columnText(index); }

template <class T>
T readRow(const sqlite::Statement& stmt) {
  T row;
  int index = 0;
  std::apply([&](const auto&... column) { (readField(stmt, index++, row.*(column.member)), ...); },
             tables::Traits<T>::columns());
  return row;
}

// Tables with a time span, for timeSpan(): (table, start column, end column).
constexpr std::string_view kTimedTables[][3] = {
    {"api_calls", "start_ns", "end_ns"}, {"kernels", "start_ns", "end_ns"},   {"memcpy", "start_ns", "end_ns"},
    {"memset", "start_ns", "end_ns"},    {"syncs", "start_ns", "end_ns"},     {"nvtx", "start_ns", "end_ns"},
    {"cpu_ops", "start_ns", "end_ns"},   {"compiles", "start_ns", "end_ns"},  {"graph_breaks", "ts_ns", "ts_ns"},
    {"recompiles", "ts_ns", "ts_ns"},    {"steps", "start_ns", "end_ns"},     {"memory_samples", "ts_ns", "ts_ns"},
    {"memory_events", "ts_ns", "ts_ns"}, {"memory_holders", "ts_ns", "ts_ns"},
};

class StatementRow final : public Row {
 public:
  explicit StatementRow(const sqlite::Statement& stmt) : stmt_(stmt) {}
  int columns() const override { return sqlite3_column_count(stmt_.get()); }
  bool isNull(int column) const override { return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL; }
  std::int64_t integer(int column) const override { return stmt_.columnInt(column); }
  double real(int column) const override { return stmt_.columnDouble(column); }
  std::string text(int column) const override { return stmt_.columnText(column); }

 private:
  const sqlite::Statement& stmt_;
};

}  // namespace

class Reader::Impl {
 public:
  Impl(std::string path, sqlite::Database db, std::int32_t version)
      : path_(std::move(path)), db_(std::move(db)), version_(version) {}

  // The tables a store of an older readable version lacks read as empty: v3 has no sampled stacks. Any other
  // missing table is a damaged store, and its query says so.
  Result<void> findTables() {
    if (version_ >= 4) return {};
    std::set<std::string, std::less<>> present;
    auto stmt = db_.prepare("SELECT name FROM sqlite_master WHERE type = 'table'");
    if (!stmt) return withPath(stmt.error());
    while (stmt->step() == SQLITE_ROW) present.insert(stmt->columnText(0));
    for (std::string_view table : {"stack_frames", "stacks", "stack_samples"}) {
      if (!present.contains(table)) absent_.emplace(table);
    }
    return {};
  }

  template <class T>
  Result<std::vector<T>> load(const LoadOptions& options) {
    if (absent_.contains(tables::Traits<T>::kTable)) return std::vector<T>();
    auto stmt = db_.prepare(tables::selectSql<T>(options.range.has_value(), options.limit.has_value()));
    if (!stmt) return withPath(stmt.error());
    if (options.range) {
      stmt->bind(1, options.range->begin_ns);
      stmt->bind(2, options.range->end_ns);
    }
    if (options.limit) stmt->bind(3, *options.limit);
    std::vector<T> rows;
    int rc;
    while ((rc = stmt->step()) == SQLITE_ROW) rows.push_back(readRow<T>(*stmt));
    if (rc != SQLITE_DONE) return db_.error(path_ + ": cannot read " + std::string(tables::Traits<T>::kTable), rc);
    return rows;
  }

  Result<std::map<std::string, std::int64_t>> counts() {
    std::map<std::string, std::int64_t> result;
    for (std::string_view table : tableNames()) {
      if (table == "run") continue;
      if (absent_.contains(table)) {
        result.emplace(table, 0);
        continue;
      }
      auto count = db_.queryInt("SELECT count(*) FROM " + std::string(table));
      if (!count) return withPath(count.error());
      result.emplace(table, *count);
    }
    return result;
  }

  Result<std::optional<TimeRange>> timeSpan() {
    std::string sql = "SELECT min(b), max(e) FROM (";
    bool first = true;
    for (const auto& timed : kTimedTables) {
      if (!first) sql += " UNION ALL ";
      first = false;
      sql += "SELECT min(" + std::string(timed[1]) + ") AS b, max(" + std::string(timed[2]) + ") AS e FROM " +
             std::string(timed[0]);
    }
    sql += ")";
    auto stmt = db_.prepare(sql);
    if (!stmt) return withPath(stmt.error());
    if (stmt->step() != SQLITE_ROW || sqlite3_column_type(stmt->get(), 0) == SQLITE_NULL) {
      return std::optional<TimeRange>();
    }
    return std::optional<TimeRange>(TimeRange{stmt->columnInt(0), stmt->columnInt(1)});
  }

  Result<void> query(std::string_view sql, const std::function<void(const Row&)>& on_row,
                     const std::vector<QueryParam>& params) {
    auto stmt = db_.prepare(sql);
    if (!stmt) return withPath(stmt.error());
    int index = 1;
    for (const auto& param : params) {
      std::visit([&](const auto& value) {
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
          stmt->bind(index++, std::string_view(value));
        } else {
          stmt->bind(index++, value);
        }
      }, param);
    }
    const StatementRow row(*stmt);
    int rc;
    while ((rc = stmt->step()) == SQLITE_ROW) on_row(row);
    if (rc != SQLITE_DONE) return db_.error(path_ + ": query failed", rc);
    return {};
  }

  const std::string& path() const { return path_; }
  std::int32_t version() const { return version_; }

 private:
  [[nodiscard]] Error withPath(const Error& error) const { return aboutFile(path_, error); }

  std::string path_;
  sqlite::Database db_;
  std::int32_t version_;
  std::set<std::string, std::less<>> absent_;  // tables this store's version predates
};

Result<std::unique_ptr<Reader>> Reader::open(const std::string& path) {
  auto db = openStoreFile(path, /*writable=*/false);
  if (!db) return db.error();
  auto version = db->queryInt("PRAGMA user_version");
  if (!version) return version.error();
  auto impl = std::make_unique<Impl>(path, std::move(*db), static_cast<std::int32_t>(*version));
  if (auto found = impl->findTables(); !found) return found.error();
  return std::unique_ptr<Reader>(new Reader(std::move(impl)));
}

Reader::Reader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Reader::~Reader() = default;

const std::string& Reader::path() const { return impl_->path(); }
std::int32_t Reader::schemaVersion() const { return impl_->version(); }

Result<RunInfo> Reader::run() const {
  auto rows = impl_->load<RunInfo>({});
  if (!rows) return rows.error();
  if (rows->empty()) return makeError(ErrorCode::kCorrupt, path() + ": the run table is empty");
  return rows->front();
}

Result<std::map<std::string, std::int64_t>> Reader::counts() const { return impl_->counts(); }
Result<std::optional<TimeRange>> Reader::timeSpan() const { return impl_->timeSpan(); }

Result<void> Reader::query(std::string_view sql, const std::function<void(const Row&)>& on_row,
                           const std::vector<QueryParam>& params) const {
  return impl_->query(sql, on_row, params);
}

template <class T>
Result<std::vector<T>> Reader::load(const LoadOptions& options) const {
  return impl_->load<T>(options);
}

#define TS_INSTANTIATE(Type) template Result<std::vector<Type>> Reader::load<Type>(const LoadOptions&) const;
TS_INSTANTIATE(RunAttribute)
TS_INSTANTIATE(Process)
TS_INSTANTIATE(Thread)
TS_INSTANTIATE(Device)
TS_INSTANTIATE(ApiCall)
TS_INSTANTIATE(Kernel)
TS_INSTANTIATE(Memcpy)
TS_INSTANTIATE(Memset)
TS_INSTANTIATE(Sync)
TS_INSTANTIATE(NvtxEvent)
TS_INSTANTIATE(CpuOp)
TS_INSTANTIATE(Compile)
TS_INSTANTIATE(GraphBreak)
TS_INSTANTIATE(Recompile)
TS_INSTANTIATE(Step)
TS_INSTANTIATE(Finding)
TS_INSTANTIATE(FixExperiment)
TS_INSTANTIATE(MemorySample)
TS_INSTANTIATE(MemoryEvent)
TS_INSTANTIATE(MemoryHolder)
TS_INSTANTIATE(StackFrame)
TS_INSTANTIATE(Stack)
TS_INSTANTIATE(StackSample)
TS_INSTANTIATE(Diagnostic)
#undef TS_INSTANTIATE

}  // namespace torchscope::store
