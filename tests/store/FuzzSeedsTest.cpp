// The store reader fuzzer's seeds (analyzer/fuzz/corpus/*.db, made by analyzer/fuzz/make_seeds.py from a store the
// real writer wrote) follow the declared schema: these tests fail when a table, column or index was declared since
// they were made, or the schema version moved past the seed that is meant to be newer. Regenerate them then, with
// the command in make_seeds.py's header.
#include <sqlite3.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "torchscope/store/Schema.h"
#include "torchscope/store/Writer.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::store {
namespace {

constexpr const char* kRegenerate = "; regenerate the seeds as analyzer/fuzz/make_seeds.py says";

std::string seedPath(const std::string& name) {
  return std::string(TORCHSCOPE_SOURCE_DIR) + "/analyzer/fuzz/corpus/" + name;
}

// A store file's schema as SQLite keeps it: its version and every table, view and index with the SQL it was made by.
struct StoredSchema {
  std::int64_t version = -1;
  std::vector<std::string> objects;  // "<type> <name>: <sql>"
  std::vector<std::string> tables;
};

StoredSchema schemaOf(const std::string& path) {
  StoredSchema schema;
  sqlite3* raw = nullptr;
  const int opened = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  const std::unique_ptr<sqlite3, decltype(&sqlite3_close)> db(raw, &sqlite3_close);
  if (opened != SQLITE_OK) return schema;
  const auto each = [&](const char* sql, auto&& on_row) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db.get(), sql, -1, &stmt, nullptr) != SQLITE_OK) return;
    while (sqlite3_step(stmt) == SQLITE_ROW) on_row(stmt);
    sqlite3_finalize(stmt);
  };
  const auto text = [](sqlite3_stmt* stmt, int column) {
    const auto* value = sqlite3_column_text(stmt, column);
    return value == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(value));
  };
  each("PRAGMA user_version", [&](sqlite3_stmt* stmt) { schema.version = sqlite3_column_int64(stmt, 0); });
  each("SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name", [&](sqlite3_stmt* stmt) {
    schema.objects.push_back(text(stmt, 0) + " " + text(stmt, 1) + ": " + text(stmt, 2));
    if (text(stmt, 0) == "table") schema.tables.push_back(text(stmt, 1));
  });
  return schema;
}

// What the writer makes today: a closed store (with its indexes), as the seeds' base store is.
StoredSchema declaredSchema() {
  testing::TempDir dir;
  {
    auto writer = Writer::open(dir.file("declared.db"));
    EXPECT_TRUE(writer) << writer.error().message;
    if (!writer) return {};
    EXPECT_TRUE((*writer)->close());
  }
  return schemaOf(dir.file("declared.db"));
}

// The seeds that change values only: their schema is the writer's, object for object.
TEST(FuzzSeeds, SeedsOfThisVersionHaveTheDeclaredSchema) {
  const StoredSchema declared = declaredSchema();
  ASSERT_EQ(declared.version, kSchemaVersion);
  ASSERT_FALSE(declared.objects.empty());
  for (const char* seed : {"valid-current.db", "extreme-values.db", "huge-strings.db", "cycles-and-dangling-ids.db"}) {
    const StoredSchema stored = schemaOf(seedPath(seed));
    EXPECT_EQ(stored.version, kSchemaVersion) << seed << kRegenerate;
    EXPECT_EQ(stored.objects, declared.objects) << seed << kRegenerate;
  }
}

// The seeds that change the schema still hold every declared table, at the version each is meant to have: the
// same, one newer (a version bump makes a new seed, not a current one), or relaxed (the same tables without
// their constraints).
TEST(FuzzSeeds, SeedsThatChangeTheSchemaKeepEveryDeclaredTable) {
  const StoredSchema declared = declaredSchema();
  const auto holds_every_table = [&](const StoredSchema& stored) {
    return std::all_of(declared.tables.begin(), declared.tables.end(), [&](const std::string& table) {
      return std::find(stored.tables.begin(), stored.tables.end(), table) != stored.tables.end();
    });
  };
  const StoredSchema additions = schemaOf(seedPath("additions-same-version.db"));
  EXPECT_EQ(additions.version, kSchemaVersion) << "additions-same-version.db" << kRegenerate;
  EXPECT_TRUE(holds_every_table(additions)) << "additions-same-version.db" << kRegenerate;
  const StoredSchema newer = schemaOf(seedPath("newer-version.db"));
  EXPECT_EQ(newer.version, kSchemaVersion + 1) << "newer-version.db" << kRegenerate;
  EXPECT_TRUE(holds_every_table(newer)) << "newer-version.db" << kRegenerate;
  const StoredSchema relaxed = schemaOf(seedPath("nulls-and-wrong-types.db"));
  EXPECT_EQ(relaxed.version, kSchemaVersion) << "nulls-and-wrong-types.db" << kRegenerate;
  EXPECT_EQ(relaxed.tables, declared.tables) << "nulls-and-wrong-types.db" << kRegenerate;
}

}  // namespace
}  // namespace torchscope::store
