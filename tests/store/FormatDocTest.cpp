// docs/FORMAT.md documents every table and column of the schema: this test fails when they drift.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "torchscope/store/Reader.h"
#include "torchscope/store/Schema.h"
#include "torchscope/store/Writer.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::store {
namespace {

std::string readFormatDoc() {
  std::ifstream in(std::string(TORCHSCOPE_SOURCE_DIR) + "/docs/FORMAT.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text of the section headed "### `table`", up to the next heading of that level or above.
std::string sectionOf(const std::string& doc, const std::string& table) {
  const std::string heading = "### `" + table + "`";
  const auto start = doc.find(heading);
  if (start == std::string::npos) return {};
  const auto end = doc.find("\n#", start + heading.size());
  return doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(FormatDoc, EveryTableAndColumnIsDocumented) {
  const std::string doc = readFormatDoc();
  ASSERT_FALSE(doc.empty()) << "docs/FORMAT.md is missing";
  testing::TempDir dir;
  {
    auto writer = Writer::open(dir.file("schema.db"));
    ASSERT_TRUE(writer);
    ASSERT_TRUE((*writer)->close());
  }
  auto reader = Reader::open(dir.file("schema.db"));
  ASSERT_TRUE(reader);
  for (std::string_view table_view : tableNames()) {
    const std::string table(table_view);
    const std::string section = sectionOf(doc, table);
    ASSERT_FALSE(section.empty()) << "table `" << table << "` has no '### `" << table << "`' section in docs/FORMAT.md";
    std::vector<std::string> columns;
    ASSERT_TRUE((*reader)->query("SELECT name FROM pragma_table_info(?)",
                                 [&](const Row& row) { columns.push_back(row.text(0)); }, {table}));
    ASSERT_FALSE(columns.empty()) << table;
    for (const auto& column : columns) {
      EXPECT_NE(section.find("| `" + column + "`"), std::string::npos)
          << "column `" << column << "` of `" << table << "` is not in its docs/FORMAT.md table";
    }
  }
}

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

}  // namespace
}  // namespace torchscope::store
