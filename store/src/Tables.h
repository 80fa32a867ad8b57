// The SQL each table's declaration (Records.h, Table.h) makes: CREATE TABLE, INSERT and SELECT. Interned text
// columns are stored as `<name>_id` in the table and read back through the `<table>_v` view.
#pragma once

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

template <class T>
std::string selectSql(bool ranged, bool limited) {
  using Tr = Traits<T>;
  std::string names;
  std::apply([&](auto... c) { ((names += (names.empty() ? "" : ", ") + std::string(c.name)), ...); }, Tr::columns());
  std::string sql = "SELECT " + names + " FROM " + std::string(Tr::kTable) + (hasInterned<T>() ? "_v" : "");
  if (ranged && !Tr::kStart.empty()) {
    sql += " WHERE " + std::string(Tr::kEnd) + " >= ?1 AND " + std::string(Tr::kStart) + " < ?2";
  }
  // Views have no rowid; every table read through a view has an `id` key instead.
  const std::string key = hasInterned<T>() ? "id" : "rowid";
  sql += Tr::kStart.empty() ? " ORDER BY " + key : " ORDER BY " + std::string(Tr::kStart) + ", " + key;
  if (limited) sql += " LIMIT ?3";
  return sql;
}

}  // namespace torchscope::store::tables
