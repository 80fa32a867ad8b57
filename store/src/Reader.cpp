#include "torchscope/store/Reader.h"

#include <array>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>

#include "Legacy.h"
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
             schema::kColumns<T>);
  return row;
}

// The run's events: appended rows with a time, which timeSpan() covers.
std::vector<const schema::Table*> eventTables() {
  std::vector<const schema::Table*> tables;
  forEachTable([&](const schema::Table& table) {
    if (table.keying == schema::Keying::kAppend && !table.start.empty()) tables.push_back(&table);
  });
  return tables;
}

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

  // The tables a store of an older readable version lacks read as empty (those declared since a later version). Any
  // other missing table is a damaged store, and its query says so.
  Result<void> findTables() {
    std::set<std::string, std::less<>> present;
    auto stmt = db_.prepare("SELECT name FROM sqlite_master WHERE type = 'table'");
    if (!stmt) return withPath(stmt.error());
    while (stmt->step() == SQLITE_ROW) present.insert(stmt->columnText(0));
    forEachTable([&](const schema::Table& table) {
      if (table.since_version > version_ && !present.contains(table.name)) absent_.emplace(table.name);
    });
    return {};
  }

  template <class T>
  Result<std::vector<T>> load(const LoadOptions& options) {
    std::optional<std::string_view> derived;
    if (absent_.contains(T::kTable.name)) {
      derived = legacy::rowsOf(T::kTable.name);
      if (!derived) return std::vector<T>();
    }
    const auto legacy_column = [](std::string_view column) { return legacy::columnOf(T::kTable.name, column); };
    auto stmt = db_.prepare(tables::selectSql<T>(options.range.has_value(), options.limit.has_value(), version_,
                                                 legacy_column, derived.value_or(std::string_view())));
    if (!stmt) return withPath(stmt.error());
    if (options.range) {
      stmt->bind(1, options.range->begin_ns);
      stmt->bind(2, options.range->end_ns);
    }
    if (options.limit) stmt->bind(3, *options.limit);
    std::vector<T> rows;
    int rc;
    while ((rc = stmt->step()) == SQLITE_ROW) rows.push_back(readRow<T>(*stmt));
    if (rc != SQLITE_DONE) return db_.error(path_ + ": cannot read " + std::string(T::kTable.name), rc);
    return rows;
  }

  Result<std::map<std::string, std::int64_t>> counts() {
    std::map<std::string, std::int64_t> result;
    for (std::string_view table : tableNames()) {
      if (table == "run") continue;
      std::string source(table);
      if (absent_.contains(table)) {
        const auto derived = legacy::rowsOf(table);
        if (!derived) {
          result.emplace(table, 0);
          continue;
        }
        source = "(" + std::string(*derived) + ")";
      }
      auto count = db_.queryInt("SELECT count(*) FROM " + source);
      if (!count) return withPath(count.error());
      result.emplace(table, *count);
    }
    return result;
  }

  Result<std::optional<TimeRange>> timeSpan() {
    std::string sql = "SELECT min(b), max(e) FROM (";
    bool first = true;
    // A table this store's version predates adds nothing: an older store's derived rows are cpu_ops rows too.
    for (const schema::Table* timed : eventTables()) {
      if (absent_.contains(timed->name)) continue;
      if (!first) sql += " UNION ALL ";
      first = false;
      sql += "SELECT min(" + std::string(timed->start) + ") AS b, max(" + std::string(timed->end) + ") AS e FROM " +
             std::string(timed->name);
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

namespace {
template <class T>
Result<void> loadAs(Reader::Impl& impl, void* rows, const LoadOptions& options) {
  auto loaded = impl.load<T>(options);
  if (!loaded) return loaded.error();
  *static_cast<std::vector<T>*>(rows) = std::move(*loaded);
  return {};
}
// One loader per record type, in RowRecords' order.
template <class... Ts>
constexpr auto loaders(std::tuple<Ts...>*) {
  return std::array{&loadAs<Ts>...};
}
constexpr auto kLoaders = loaders(static_cast<RowRecords*>(nullptr));
}  // namespace

Result<void> Reader::loadInto(std::size_t type, void* rows, const LoadOptions& options) const {
  return kLoaders[type](*impl_, rows, options);
}

}  // namespace torchscope::store
