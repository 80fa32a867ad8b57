// Opening anything that is not a readable torchscope store gives a clear, typed error.
#include <sqlite3.h>

#include <fstream>

#include <gtest/gtest.h>

#include "torchscope/store/Reader.h"
#include "torchscope/store/Schema.h"
#include "torchscope/store/Writer.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::store {
namespace {

void writeFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

void execSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

std::string makeStore(const testing::TempDir& dir, int kernels = 10) {
  const std::string path = dir.file("run.db");
  auto writer = Writer::open(path);
  EXPECT_TRUE(writer);
  for (int i = 0; i < kernels; ++i) {
    Kernel k;
    k.name = std::string(200, static_cast<char>('a' + i % 26)) + std::to_string(i);
    (*writer)->add(k);
  }
  EXPECT_TRUE((*writer)->close());
  return path;
}

TEST(StoreErrors, MissingFile) {
  auto reader = Reader::open("/nonexistent/run.db");
  ASSERT_FALSE(reader);
  EXPECT_EQ(reader.error().code, ErrorCode::kNotFound);
  EXPECT_NE(reader.error().message.find("/nonexistent/run.db"), std::string::npos);
}

TEST(StoreErrors, TextFileIsNotAStore) {
  testing::TempDir dir;
  writeFile(dir.file("train.py"), "import torch\nprint('hello')\n");
  auto reader = Reader::open(dir.file("train.py"));
  ASSERT_FALSE(reader);
  EXPECT_EQ(reader.error().code, ErrorCode::kNotTorchscope);
  EXPECT_NE(reader.error().message.find("not a torchscope store"), std::string::npos);
}

TEST(StoreErrors, EmptyFileIsNotAStore) {
  testing::TempDir dir;
  writeFile(dir.file("empty.db"), "");
  auto reader = Reader::open(dir.file("empty.db"));
  ASSERT_FALSE(reader);
  EXPECT_EQ(reader.error().code, ErrorCode::kNotTorchscope);
}

TEST(StoreErrors, ForeignSqliteDatabase) {
  testing::TempDir dir;
  execSql(dir.file("other.db"), "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);");
  auto reader = Reader::open(dir.file("other.db"));
  ASSERT_FALSE(reader);
  EXPECT_EQ(reader.error().code, ErrorCode::kNotTorchscope);
  EXPECT_NE(reader.error().message.find("SQLite database but not a torchscope store"), std::string::npos);
}

TEST(StoreErrors, NewerSchemaVersion) {
  testing::TempDir dir;
  const std::string path = makeStore(dir);
  execSql(path, "PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
  auto reader = Reader::open(path);
  ASSERT_FALSE(reader);
  EXPECT_EQ(reader.error().code, ErrorCode::kVersion);
  EXPECT_NE(reader.error().message.find("upgrade torchscope"), std::string::npos);
  WriterOptions append;
  append.mode = OpenMode::kAppend;
  auto writer = Writer::open(path, append);
  ASSERT_FALSE(writer);
  EXPECT_EQ(writer.error().code, ErrorCode::kVersion);
}

TEST(StoreErrors, OlderSchemaVersionAsksForANewRecording) {
  testing::TempDir dir;
  const std::string path = makeStore(dir);
  execSql(path, "PRAGMA user_version = " + std::to_string(kOldestReadableVersion - 1));
  auto reader = Reader::open(path);
  ASSERT_FALSE(reader);
  EXPECT_EQ(reader.error().code, ErrorCode::kVersion);
  EXPECT_NE(reader.error().message.find("record the run again"), std::string::npos);
}

// A v3 store has no sampled-stack tables: it reads as a run without samples.
TEST(StoreErrors, AVersion3StoreReadsWithoutSamples) {
  testing::TempDir dir;
  const std::string path = makeStore(dir);
  execSql(path, "DROP TABLE stack_samples; DROP TABLE stacks; DROP TABLE stack_frames; PRAGMA user_version = 3");
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message;
  auto samples = (*reader)->load<StackSample>();
  ASSERT_TRUE(samples) << samples.error().message;
  EXPECT_TRUE(samples->empty());
  auto counts = (*reader)->counts();
  ASSERT_TRUE(counts) << counts.error().message;
  EXPECT_EQ(counts->at("stack_samples"), 0);
  EXPECT_EQ(counts->at("kernels"), 10);
}

// Only the tables a store's version predates read as empty: a v4 store without them is damaged.
TEST(StoreErrors, AVersion4StoreWithoutItsSampleTablesIsDamaged) {
  testing::TempDir dir;
  const std::string path = makeStore(dir);
  execSql(path, "DROP TABLE stack_samples");
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message;
  auto samples = (*reader)->load<StackSample>();
  ASSERT_FALSE(samples);
  EXPECT_NE(samples.error().message.find("damaged store"), std::string::npos) << samples.error().message;
}

TEST(StoreErrors, DamagedPagesAreReportedAsCorrupt) {
  testing::TempDir dir;
  const std::string path = makeStore(dir, 2000);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(0, std::ios::end);
    const auto size = static_cast<long>(file.tellg());
    ASSERT_GT(size, 64 * 1024);
    // Overwrite pages from the second on: the header stays valid, the b-trees are garbage.
    file.seekp(4096);
    const std::string garbage(static_cast<std::size_t>(size - 8192), '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  auto reader = Reader::open(path);
  if (!reader) {
    EXPECT_TRUE(reader.error().code == ErrorCode::kCorrupt || reader.error().code == ErrorCode::kNotTorchscope)
        << reader.error().message;
    return;
  }
  auto kernels = (*reader)->load<Kernel>();
  ASSERT_FALSE(kernels);
  EXPECT_EQ(kernels.error().code, ErrorCode::kCorrupt) << kernels.error().message;
}

TEST(StoreErrors, CreateInMissingDirectoryFails) {
  auto writer = Writer::open("/nonexistent-dir/run.db");
  ASSERT_FALSE(writer);
  EXPECT_NE(writer.error().message.find("/nonexistent-dir/run.db"), std::string::npos);
}

}  // namespace
}  // namespace torchscope::store
