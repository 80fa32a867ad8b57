// How a record type declares its table. The store's schema is written once: each record struct of Records.h
// carries its table (`kTable`) and its columns (`columns()`), and everything else follows from that one
// declaration: the CREATE TABLE statements and indexes (Schema.cpp), the table list, the writer's queue and
// INSERTs, the reader's SELECTs, the collector's JSON decoding. docs/FORMAT.md is checked against it
// (tests/store/SchemaDeclarationTest.cpp).
//
// Plain C++ rather than an X-macro: the structs stay ordinary structs, the type every reader of the store uses,
// whose members an editor can find; the column list sits right under the members it names, and a compile-time
// check (declaresEveryMember) catches a member that has no column.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace torchscope::store::schema {

// How rows are keyed: append a new row (under an `id INTEGER PRIMARY KEY` of its own), replace the row with the
// same key columns, or the one-row run table.
enum class Keying { kAppend, kReplace, kSingleton };

// What a column is beyond its C++ type (std::int64_t and bool: INTEGER, double: REAL, std::string: TEXT; every
// column is NOT NULL).
enum class Role : std::uint8_t {
  kPlain,
  kKey,         // (part of) the primary key of a kReplace table
  kInterned,    // text stored as `<name>_id`, a row of `strings`, and read back through the `<table>_v` view
  kJsonArray,   // a JSON array as text; "[]" when a source gives none
  kJsonObject,  // a JSON object as text; "{}" when a source gives none
  kReferences,  // an id of another table's row: `references` names it, as `table(column)`
};

template <class R, class M>
struct Column {
  using Record = R;
  using Type = M;
  std::string_view name;
  M R::*member;
  Role role = Role::kPlain;
  std::string_view references = {};
  // The store version the column appeared in: a store of an older readable version reads it as the struct's default
  // (or as what store/src/Legacy.cpp derives from that version's layout), so a new column refuses no older store.
  int since_version = 1;

  [[nodiscard]] constexpr bool interned() const { return role == Role::kInterned; }
  // The column, declared as added in store version `version`: `column("x", &R::x).since(5)`.
  [[nodiscard]] constexpr Column since(int version) const {
    Column added = *this;
    added.since_version = version;
    return added;
  }
};

template <class R, class M>
constexpr Column<R, M> column(std::string_view name, M R::*member) {
  return {name, member};
}
template <class R, class M>
constexpr Column<R, M> primaryKey(std::string_view name, M R::*member) {
  return {name, member, Role::kKey};
}
template <class R>
constexpr Column<R, std::string> interned(std::string_view name, std::string R::*member) {
  return {name, member, Role::kInterned};
}
template <class R>
constexpr Column<R, std::string> jsonArray(std::string_view name, std::string R::*member) {
  return {name, member, Role::kJsonArray};
}
template <class R>
constexpr Column<R, std::string> jsonObject(std::string_view name, std::string R::*member) {
  return {name, member, Role::kJsonObject};
}
template <class R>
constexpr Column<R, std::int64_t> references(std::string_view name, std::int64_t R::*member, std::string_view target) {
  return {name, member, Role::kReferences, target};
}

// An index built when a run closes: `<table>_<suffix>` on `columns` (SQL column names, comma-separated).
struct Index {
  std::string_view suffix;
  std::string_view columns;
};

struct Table {
  std::string_view name;
  Keying keying = Keying::kAppend;
  // The time columns: a span (start, end) or one time named twice. Empty for an untimed table. Appended rows
  // with a time are the run's events: Reader::timeSpan() covers them.
  std::string_view start = {};
  std::string_view end = {};
  // The end is -1 until it is known (a process still running): such a row reaches only to its start.
  bool open_end = false;
  std::array<Index, 2> indexes = {};
  // The store version the table appeared in: a store of an older readable version reads it as empty (or as what
  // store/src/Legacy.cpp derives from that version's layout).
  int since_version = 1;
  // Records of what the job does step by step: the collector keeps them only while the capture window is open.
  bool windowed = false;
};

// A struct whose members are declared as columns: a record, or an object held in a record's JSON column (a census
// site), which the store decodes with the same declaration (JsonRecord.h).
template <class T>
concept Fields = requires {
  T::columns();
};

// A record type of the store: a struct with its table and columns.
template <class T>
concept Record = Fields<T> && requires {
  { T::kTable } -> std::convertible_to<Table>;
};

template <Fields T>
inline constexpr auto kColumns = T::columns();

template <Fields T>
inline constexpr std::size_t kColumnCount = std::tuple_size_v<decltype(T::columns())>;

// Calls visit(column) for each column of T, in declaration order.
template <Fields T, class F>
constexpr void forEachColumn(F&& visit) {
  std::apply([&](const auto&... each) { (visit(each), ...); }, kColumns<T>);
}

template <Record T>
constexpr bool hasInterned() {
  bool any = false;
  forEachColumn<T>([&](const auto& each) { any = any || each.interned(); });
  return any;
}

// No column name, and no member, declared twice.
template <Fields T>
constexpr bool columnsAreDistinct() {
  std::array<std::string_view, kColumnCount<T>> names{};
  std::size_t count = 0;
  bool distinct = true;
  forEachColumn<T>([&](const auto& each) {
    for (std::size_t i = 0; i < count; ++i) distinct = distinct && names[i] != each.name;
    names[count++] = each.name;
    forEachColumn<T>([&](const auto& other) {
      if constexpr (std::is_same_v<decltype(other.member), decltype(each.member)>) {
        if (&other != &each && other.member == each.member) distinct = false;
      }
    });
  });
  return distinct;
}

namespace detail {
// Converts to any member type: counts how many initialisers an aggregate takes.
struct AnyMember {
  template <class U>
  constexpr operator U() const noexcept;  // NOLINT: implicit by design, never called
};
template <class T, std::size_t... I>
constexpr bool initializableWith(std::index_sequence<I...>) {
  return requires { T{(void(I), AnyMember{})...}; };
}
template <class T, std::size_t N = 0>
constexpr std::size_t memberCount() {
  if constexpr (!initializableWith<T>(std::make_index_sequence<N + 1>{})) {
    return N;
  } else {
    return memberCount<T, N + 1>();
  }
}
}  // namespace detail

// Every data member of T has a column: a member added to a struct without its column fails to compile.
template <Fields T>
constexpr bool declaresEveryMember() {
  return detail::memberCount<T>() == kColumnCount<T>;
}

// The index of T in the tuple of record types Ts.
template <class T, class Tuple>
struct IndexOf;
template <class T, class... Ts>
struct IndexOf<T, std::tuple<Ts...>> {
  static constexpr std::size_t value = [] {
    constexpr std::array<bool, sizeof...(Ts)> same{std::is_same_v<T, Ts>...};
    for (std::size_t i = 0; i < same.size(); ++i) {
      if (same[i]) return i;
    }
    return same.size();
  }();
};

}  // namespace torchscope::store::schema
