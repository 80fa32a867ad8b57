#include "torchscope/store/Schema.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "Tables.h"

namespace torchscope::store {

namespace {

// The interned texts: not a record type, the writer's Interner fills it.
constexpr std::string_view kStringsTable = R"sql(
CREATE TABLE strings (
  id    INTEGER PRIMARY KEY,
  value TEXT NOT NULL UNIQUE
);
)sql";

// The views that resolve interned columns, written out for their readable aliases; the schema declaration test
// checks that each names exactly its table's interned columns.
constexpr std::string_view kViews = R"sql(CREATE VIEW api_calls_v AS
  SELECT a.*, s.value AS name FROM api_calls a JOIN strings s ON s.id = a.name_id;
CREATE VIEW kernels_v AS
  SELECT k.*, s.value AS name FROM kernels k JOIN strings s ON s.id = k.name_id;
CREATE VIEW syncs_v AS
  SELECT y.*, o.value AS op, f.value AS file
  FROM syncs y JOIN strings o ON o.id = y.op_id JOIN strings f ON f.id = y.file_id;
CREATE VIEW nvtx_v AS
  SELECT n.*, s.value AS name, d.value AS domain
  FROM nvtx n JOIN strings s ON s.id = n.name_id JOIN strings d ON d.id = n.domain_id;
CREATE VIEW cpu_ops_v AS
  SELECT c.*, s.value AS name FROM cpu_ops c JOIN strings s ON s.id = c.name_id;
)sql";

template <class M>
constexpr std::string_view sqlType() {
  if constexpr (std::is_same_v<M, std::string>) {
    return "TEXT";
  } else if constexpr (std::is_same_v<M, double>) {
    return "REAL";
  } else {
    static_assert(std::is_same_v<M, std::int64_t> || std::is_same_v<M, bool>);
    return "INTEGER";
  }
}

// One column's line: name, type, then its key or NOT NULL (with the struct's default value for the one-row run
// table, whose row is written before its fields are known), then what it references.
struct ColumnLine {
  std::string name;
  std::string rest;
};

template <schema::Record T>
std::string createTableSql() {
  const schema::Table& table = T::kTable;
  std::vector<ColumnLine> lines;
  if (table.keying == schema::Keying::kSingleton) {
    lines.push_back({"id", "INTEGER PRIMARY KEY CHECK (id = 1)"});
  } else if (table.keying == schema::Keying::kAppend) {
    lines.push_back({"id", "INTEGER PRIMARY KEY"});
  }
  std::vector<std::string> keys;
  schema::forEachColumn<T>([&](const auto& column) {
    if (column.role == schema::Role::kKey) keys.push_back(std::string(column.name));
  });
  const T defaults{};
  schema::forEachColumn<T>([&](const auto& column) {
    using M = typename std::decay_t<decltype(column)>::Type;
    std::string rest(column.interned() ? "INTEGER" : sqlType<M>());
    if (column.role == schema::Role::kKey && keys.size() == 1) {
      rest += " PRIMARY KEY";
    } else {
      rest += " NOT NULL";
      if (table.keying == schema::Keying::kSingleton)
        rest += " DEFAULT " + tables::sqlLiteral(defaults.*(column.member));
    }
    if (column.interned()) rest += " REFERENCES strings(id)";
    if (!column.references.empty()) rest += " REFERENCES " + std::string(column.references);
    lines.push_back({tables::storedName(column), std::move(rest)});
  });
  std::size_t width = 0;
  for (const auto& line : lines) width = std::max(width, line.name.size());
  std::string sql = "CREATE TABLE " + std::string(table.name) + " (\n";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    sql += "  " + lines[i].name + std::string(width + 1 - lines[i].name.size(), ' ') + lines[i].rest;
    sql += i + 1 < lines.size() ? ",\n" : "";
  }
  if (keys.size() > 1) {
    sql += ",\n  PRIMARY KEY (";
    for (std::size_t i = 0; i < keys.size(); ++i) sql += (i ? ", " : "") + keys[i];
    sql += ")";
  }
  return sql + "\n);\n";
}

template <schema::Record T>
std::string createIndexesSql() {
  std::string sql;
  for (const schema::Index& index : T::kTable.indexes) {
    if (index.suffix.empty()) continue;
    const std::string table(T::kTable.name);
    sql += "CREATE INDEX IF NOT EXISTS " + table + "_" + std::string(index.suffix) + " ON " + table + "(" +
           std::string(index.columns) + ");\n";
  }
  return sql;
}

template <class... Ts>
std::string schemaOf(std::tuple<Ts...>*) {
  return std::string(kStringsTable) + (createTableSql<Ts>() + ...) + std::string(kViews);
}

template <class... Ts>
std::string indexesOf(std::tuple<Ts...>*) {
  return "\n" + (createIndexesSql<Ts>() + ...);
}

template <class... Ts>
std::vector<std::string_view> namesOf(std::tuple<Ts...>*) {
  return {"strings", Ts::kTable.name...};
}

}  // namespace

std::vector<std::string_view> tableNames() { return namesOf(static_cast<AllRecords*>(nullptr)); }

std::string_view schemaSql() {
  static const std::string sql = schemaOf(static_cast<AllRecords*>(nullptr));
  return sql;
}

std::string_view indexSql() {
  static const std::string sql = indexesOf(static_cast<AllRecords*>(nullptr));
  return sql;
}

}  // namespace torchscope::store
