// The store's tables are declared once, in Records.h: these tests fail when the SQL a store is made with, the views
// or docs/FORMAT.md (a section and a column table per table, no section for a table that does not exist, the schema
// version) disagree with the declarations, and show that a column declared twice or a struct member without a
// column is caught.
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "Tables.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/Records.h"
#include "torchscope/store/Schema.h"
#include "torchscope/store/Writer.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::store {
namespace {

// One column as a table has it: name, SQL type, NOT NULL, position in the primary key (0: none), default.
struct SqlColumn {
  std::string name;
  std::string type;
  bool not_null = false;
  std::int64_t key = 0;
  std::string default_value;
  bool operator==(const SqlColumn&) const = default;
};

std::ostream& operator<<(std::ostream& out, const SqlColumn& column) {
  return out << column.name << " " << column.type << (column.not_null ? " NOT NULL" : "") << " key " << column.key
             << " default '" << column.default_value << "'";
}

template <class M>
std::string sqlTypeOf() {
  if constexpr (std::is_same_v<M, std::string>) return "TEXT";
  if constexpr (std::is_same_v<M, double>) return "REAL";
  return "INTEGER";
}

template <class M>
std::string defaultOf(const M& value) {
  if constexpr (std::is_same_v<M, std::string>) {
    return "'" + value + "'";
  } else {
    return std::to_string(value);
  }
}

// The columns T's declaration makes, as SQLite reports a table's columns.
template <class T>
std::vector<SqlColumn> declaredColumns() {
  std::vector<SqlColumn> columns;
  if (T::kTable.keying != schema::Keying::kReplace) columns.push_back({"id", "INTEGER", false, 1, ""});
  std::int64_t keys = 0;
  schema::forEachColumn<T>([&](const auto& column) { keys += column.role == schema::Role::kKey ? 1 : 0; });
  std::int64_t key = 0;
  const T defaults{};
  schema::forEachColumn<T>([&](const auto& column) {
    using M = typename std::decay_t<decltype(column)>::Type;
    SqlColumn out{tables::storedName(column), column.interned() ? "INTEGER" : sqlTypeOf<M>(), true, 0, ""};
    if (column.role == schema::Role::kKey) {
      out.key = ++key;
      out.not_null = keys > 1;  // a one-column key is declared PRIMARY KEY alone
    }
    if (T::kTable.keying == schema::Keying::kSingleton) out.default_value = defaultOf(defaults.*(column.member));
    columns.push_back(out);
  });
  return columns;
}

class SchemaDeclaration : public ::testing::Test {
 protected:
  void SetUp() override {
    auto writer = Writer::open(dir_.file("schema.db"));
    ASSERT_TRUE(writer) << writer.error().message;
    ASSERT_TRUE((*writer)->close());
    auto reader = Reader::open(dir_.file("schema.db"));
    ASSERT_TRUE(reader) << reader.error().message;
    reader_ = std::move(*reader);
  }

  std::vector<SqlColumn> storedColumns(const std::string& table) const {
    std::vector<SqlColumn> columns;
    EXPECT_TRUE(reader_->query(
        "SELECT name, type, \"notnull\", pk, coalesce(dflt_value, '') FROM pragma_table_info(?)",
        [&](const Row& row) {
          columns.push_back({row.text(0), row.text(1), row.integer(2) != 0, row.integer(3), row.text(4)});
        },
        {table}));
    return columns;
  }

  testing::TempDir dir_;
  std::unique_ptr<Reader> reader_;
};

TEST_F(SchemaDeclaration, EveryTableIsMadeAsDeclared) {
  std::apply(
      [&](auto... record) {
        auto check = [&](auto one) {
          using T = decltype(one);
          EXPECT_EQ(storedColumns(std::string(T::kTable.name)), declaredColumns<T>()) << T::kTable.name;
        };
        (check(record), ...);
      },
      AllRecords{});
}

TEST_F(SchemaDeclaration, TheTableListFollowsTheDeclarations) {
  std::vector<std::string> stored;
  ASSERT_TRUE(reader_->query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid",
                             [&](const Row& row) { stored.push_back(row.text(0)); }));
  std::vector<std::string> declared{"strings"};
  std::apply([&](auto... record) { (declared.emplace_back(decltype(record)::kTable.name), ...); }, AllRecords{});
  EXPECT_EQ(stored, declared);
  const std::vector<std::string_view> names = tableNames();
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.end()), declared);
}

// Each `<table>_v` view is the table's columns and then its interned texts by name; only tables with interned
// columns have one.
TEST_F(SchemaDeclaration, ViewsResolveExactlyTheInternedColumns) {
  std::apply(
      [&](auto... record) {
        auto check = [&](auto one) {
          using T = decltype(one);
          const std::string view = std::string(T::kTable.name) + "_v";
          std::vector<std::string> expected;
          if (schema::hasInterned<T>()) {
            for (const auto& column : declaredColumns<T>()) expected.push_back(column.name);
            schema::forEachColumn<T>([&](const auto& column) {
              if (column.interned()) expected.emplace_back(column.name);
            });
          }
          std::vector<std::string> stored;
          for (const auto& column : storedColumns(view)) stored.push_back(column.name);
          EXPECT_EQ(stored, expected) << view;
        };
        (check(record), ...);
      },
      AllRecords{});
}

std::string readFormatDoc() {
  std::ifstream in(std::string(TORCHSCOPE_SOURCE_DIR) + "/docs/FORMAT.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text of the section headed "### `table`", up to the next heading (of any level); empty when there is
// none.
std::string sectionOf(const std::string& doc, const std::string& table) {
  const std::string heading = "\n### `" + table + "`\n";
  const auto start = doc.find(heading);
  if (start == std::string::npos) return {};
  const auto end = doc.find("\n#", start + heading.size());
  return doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The rows of the column table in a table's section: (name, type) in order.
std::vector<std::pair<std::string, std::string>> documentedColumns(const std::string& section) {
  std::vector<std::pair<std::string, std::string>> columns;
  const auto header = section.find("| column | type | meaning |");
  if (header == std::string::npos) return columns;
  std::istringstream lines(section.substr(header));
  std::string line;
  std::getline(lines, line);  // header
  std::getline(lines, line);  // |---|
  while (std::getline(lines, line) && line.rfind("| `", 0) == 0) {
    const auto name_end = line.find('`', 3);
    const auto type_start = line.find("| ", name_end) + 2;
    const auto type_end = line.find(' ', type_start);
    columns.emplace_back(line.substr(3, name_end - 3), line.substr(type_start, type_end - type_start));
  }
  return columns;
}

// docs/FORMAT.md has a section for every table, whose column table lists the table's columns in order with their
// types.
TEST_F(SchemaDeclaration, FormatDocListsEachTablesColumnsInOrderWithTheirTypes) {
  const std::string doc = readFormatDoc();
  ASSERT_FALSE(doc.empty()) << "docs/FORMAT.md is missing";
  for (std::string_view table_name : tableNames()) {
    const std::string table(table_name);
    const std::string section = sectionOf(doc, table);
    EXPECT_FALSE(section.empty()) << "table `" << table << "` has no '### `" << table << "`' section in docs/FORMAT.md";
    std::vector<std::pair<std::string, std::string>> stored;
    for (const auto& column : storedColumns(table)) stored.emplace_back(column.name, column.type);
    EXPECT_FALSE(stored.empty()) << table;
    EXPECT_EQ(documentedColumns(section), stored) << "docs/FORMAT.md's column table of `" << table << "`";
  }
}

// ... and no section for a table the store does not have (views, `<table>_v`, are documented beside their tables).
TEST(FormatDoc, DocumentsNoTableThatDoesNotExist) {
  const std::string doc = readFormatDoc();
  std::set<std::string> tables;
  for (auto name : tableNames()) tables.emplace(name);
  const std::regex heading("\n### `([a-z_]+)`");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), heading); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    if (name.size() > 2 && name.substr(name.size() - 2) == "_v") continue;  // views
    EXPECT_TRUE(tables.count(name)) << "docs/FORMAT.md documents `" << name << "`, which the schema does not have";
  }
}

TEST(FormatDoc, StatesTheSchemaVersion) {
  EXPECT_NE(readFormatDoc().find("Schema version: " + std::to_string(kSchemaVersion)), std::string::npos);
}

TEST_F(SchemaDeclaration, IndexesAreOnDeclaredColumns) {
  std::map<std::string, std::string> indexes;  // index -> table
  ASSERT_TRUE(reader_->query("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL",
                             [&](const Row& row) { indexes.emplace(row.text(0), row.text(1)); }));
  std::size_t declared = 0;
  std::apply(
      [&](auto... record) {
        auto check = [&](auto one) {
          using T = decltype(one);
          for (const schema::Index& index : T::kTable.indexes) {
            if (index.suffix.empty()) continue;
            ++declared;
            const std::string name = std::string(T::kTable.name) + "_" + std::string(index.suffix);
            EXPECT_EQ(indexes[name], T::kTable.name) << name;
          }
        };
        (check(record), ...);
      },
      AllRecords{});
  EXPECT_EQ(indexes.size(), declared);
}

// What the build-time checks (Tables.h) catch, shown on declarations made wrong on purpose.
struct TwiceNamed {
  std::int64_t a = 0;
  std::int64_t b = 0;
  static constexpr auto columns() {
    return std::tuple{schema::column("a", &TwiceNamed::a), schema::column("a", &TwiceNamed::b)};
  }
};
struct TwiceMember {
  std::int64_t a = 0;
  std::string b;
  static constexpr auto columns() {
    return std::tuple{schema::column("a", &TwiceMember::a), schema::column("b", &TwiceMember::b),
                      schema::column("c", &TwiceMember::a)};
  }
};
struct MemberWithoutColumn {
  std::int64_t a = 0;
  std::string b;
  bool c = false;
  static constexpr auto columns() {
    return std::tuple{schema::column("a", &MemberWithoutColumn::a), schema::column("b", &MemberWithoutColumn::b)};
  }
};

TEST(SchemaDeclarationChecks, CatchAColumnDeclaredTwiceOrAMemberWithoutOne) {
  static_assert(!schema::columnsAreDistinct<TwiceNamed>());
  static_assert(!schema::columnsAreDistinct<TwiceMember>());
  static_assert(schema::columnsAreDistinct<MemberWithoutColumn>());
  static_assert(!schema::declaresEveryMember<MemberWithoutColumn>());
  static_assert(schema::declaresEveryMember<TwiceNamed>());
  std::apply([](auto... record) { EXPECT_TRUE((schema::columnsAreDistinct<decltype(record)>() && ...)); },
             AllRecords{});
  std::apply([](auto... record) { EXPECT_TRUE((schema::declaresEveryMember<decltype(record)>() && ...)); },
             AllRecords{});
}

}  // namespace
}  // namespace torchscope::store
