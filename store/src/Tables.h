// The SQL each table's declaration (Records.h, Table.h) makes: CREATE TABLE, INSERT and SELECT. Interned text
// columns are stored as `<name>_id` in the table and read back through the `<table>_v` view.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "torchscope/store/Records.h"

namespace torchscope::store::tables {

using schema::Keying;

// A table's declaration as the SQL below and the tests read it.
template <schema::Record T>
struct Traits {
  static constexpr std::string_view kTable = T::kTable.name;
  static constexpr std::string_view kStart = T::kTable.start;
  static constexpr std::string_view kEnd = T::kTable.end;
  static constexpr Keying kKeying = T::kTable.keying;
  static constexpr auto columns() { return T::columns(); }
};

// Each declaration is checked once, here: a column declared twice, or a member of the struct without a column,
// fails the build.
template <class... Ts>
constexpr bool everyDeclarationIsWhole(std::tuple<Ts...>*) {
  return ((schema::columnsAreDistinct<Ts>() && schema::declaresEveryMember<Ts>()) && ...);
}
static_assert(everyDeclarationIsWhole(static_cast<AllRecords*>(nullptr)));

using schema::hasInterned;
using schema::kColumns;

// The SQL column a field is stored in.
template <class C>
std::string storedName(const C& column) {
  return column.interned() ? std::string(column.name) + "_id" : std::string(column.name);
}

// Parameters a row of T binds.
template <class T>
constexpr int columnCount() {
  return static_cast<int>(schema::kColumnCount<T>);
}

// INSERT of `rows` rows (VALUES (...), (...)): one statement step for many rows, the rows' parameters
// numbered in order, row after row.
template <class T>
std::string insertSql(int rows = 1) {
  using Tr = Traits<T>;
  std::string names, params;
  if constexpr (Tr::kKeying == Keying::kSingleton) {
    names = "id";
    params = "1";
  }
  std::apply(
      [&](auto... c) {
        ((names += (names.empty() ? "" : ", ") + storedName(c), params += params.empty() ? "?" : ", ?"), ...);
      },
      Tr::columns());
  const char* verb = Tr::kKeying == Keying::kAppend ? "INSERT INTO " : "INSERT OR REPLACE INTO ";
  std::string sql = verb + std::string(Tr::kTable) + " (" + names + ") VALUES (" + params + ")";
  for (int row = 1; row < rows; ++row) sql += ", (" + params + ")";
  return sql;
}

// A column's default as an SQL literal: what a store that predates the column reads.
template <class M>
std::string sqlLiteral(const M& value) {
  if constexpr (std::is_same_v<M, std::string>) {
    std::string quoted = "'";
    for (const char c : value) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    return quoted + "'";
  } else if constexpr (std::is_same_v<M, bool>) {
    return value ? "1" : "0";
  } else {
    return std::to_string(value);
  }
}

// What a column reads as in a store of `version`: the column, or for one added since, what `legacy` derives from
// the older layout (an SQL expression over the row), else the struct's default.
template <class T, class C>
std::string selectedColumn(const C& column, std::int32_t version,
                           const std::function<std::optional<std::string_view>(std::string_view)>& legacy) {
  if (column.since_version <= version) return std::string(column.name);
  if (const auto derived = legacy(column.name)) return std::string(*derived) + " AS " + std::string(column.name);
  const T defaults{};
  return sqlLiteral(defaults.*(column.member)) + " AS " + std::string(column.name);
}

// The rows of T in a store of `version` (the current one by default), ranged over its time columns and limited
// as asked; `from` replaces the table by a derived one (a SELECT of the columns, for a store that predates T).
template <class T>
std::string selectSql(bool ranged, bool limited, std::int32_t version = INT32_MAX,
                      const std::function<std::optional<std::string_view>(std::string_view)>& legacy = {},
                      std::string_view from = {}) {
  using Tr = Traits<T>;
  std::string names;
  if (!from.empty()) {
    names = "*";
  } else {
    std::apply(
        [&](auto... c) { ((names += (names.empty() ? "" : ", ") + selectedColumn<T>(c, version, legacy)), ...); },
        Tr::columns());
  }
  const std::string source =
      from.empty() ? std::string(Tr::kTable) + (hasInterned<T>() ? "_v" : "") : "(" + std::string(from) + ")";
  std::string sql = "SELECT " + names + " FROM " + source;
  if (ranged && !Tr::kStart.empty()) {
    sql += " WHERE " + std::string(Tr::kEnd) + " >= ?1 AND " + std::string(Tr::kStart) + " < ?2";
  }
  if (from.empty()) {
    // Views have no rowid; every table read through a view has an `id` key instead.
    const std::string key = hasInterned<T>() ? "id" : "rowid";
    sql += Tr::kStart.empty() ? " ORDER BY " + key : " ORDER BY " + std::string(Tr::kStart) + ", " + key;
  } else if (!Tr::kStart.empty()) {
    sql += " ORDER BY " + std::string(Tr::kStart);  // ties in the derived SELECT's own order
  }
  if (limited) sql += " LIMIT ?3";
  return sql;
}

}  // namespace torchscope::store::tables
