// Every table: rows written through the Writer come back equal, field by field, through the Reader.
#include <algorithm>
#include <tuple>

#include <gtest/gtest.h>

#include "Tables.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/Writer.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::store {
namespace {

// Fills every column of a record with a value derived from the row and column number, so that
// a column written to or read from the wrong place shows up as a mismatch.
template <class T>
T makeRow(int row) {
  T record;
  int column = 0;
  auto fill = [&](const auto& c) {
    auto& field = record.*(c.member);
    using Field = std::decay_t<decltype(field)>;
    const int seed = row * 100 + column++;
    if constexpr (std::is_same_v<Field, std::string>) {
      field = std::string(c.name) + "-" + std::to_string(seed) + (seed % 3 == 0 ? " \xc3\xa9\"'<>" : "");
    } else if constexpr (std::is_same_v<Field, bool>) {
      field = seed % 2 == 1;
    } else if constexpr (std::is_same_v<Field, double>) {
      field = seed + 0.25;
    } else {
      field = 1'000'000'000'000LL + seed;
    }
  };
  std::apply([&](const auto&... c) { (fill(c), ...); }, tables::Traits<T>::columns());
  return record;
}

template <class T>
class RoundTripTest : public ::testing::Test {};

// Every record type the store declares but the run (RowRecords), as GoogleTest's type list.
template <class Records>
struct TestTypesOf;
template <class... Ts>
struct TestTypesOf<std::tuple<Ts...>> {
  using type = ::testing::Types<Ts...>;
};
using RecordTypes = TestTypesOf<RowRecords>::type;
TYPED_TEST_SUITE(RoundTripTest, RecordTypes);

TYPED_TEST(RoundTripTest, RowsComeBackEqual) {
  testing::TempDir dir;
  const std::string path = dir.file("run.db");
  std::vector<TypeParam> written;
  for (int row = 0; row < 3; ++row) written.push_back(makeRow<TypeParam>(row));
  {
    auto writer = Writer::open(path);
    ASSERT_TRUE(writer) << writer.error().message;
    for (const auto& record : written) (*writer)->add(record);
    ASSERT_TRUE((*writer)->close());
    EXPECT_EQ((*writer)->stats().written, written.size());
  }
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message;
  auto read = (*reader)->load<TypeParam>();
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, written);
}

// The order the reader returns rows in: by start time where the table has one, then as written.
template <class T>
std::vector<T> inReadOrder(std::vector<T> rows) {
  using Tr = tables::Traits<T>;
  auto start = [](const T& row) {
    std::int64_t value = 0;
    auto take = [&](const auto& c) {
      if constexpr (std::is_same_v<std::decay_t<decltype(row.*(c.member))>, std::int64_t>) {
        if (c.name == Tr::kStart) value = row.*(c.member);
      }
    };
    std::apply([&](const auto&... c) { (take(c), ...); }, Tr::columns());
    return value;
  };
  if (!Tr::kStart.empty()) {
    std::stable_sort(rows.begin(), rows.end(), [&](const T& a, const T& b) { return start(a) < start(b); });
  }
  return rows;
}

// Enough rows for several multi-row INSERTs and a remainder written row by row, over two transactions.
// Appended rows repeat with a period (70) that is not the statement's row count, so a parameter
// sees its value repeated by the same row of the next statement, or changed; keyed rows stay
// distinct, or they would replace each other.
TYPED_TEST(RoundTripTest, ManyRowsComeBackEqualInOrder) {
  testing::TempDir dir;
  const std::string path = dir.file("run.db");
  std::vector<TypeParam> written;
  for (int row = 0; row < 333; ++row) {
    const bool appended = tables::Traits<TypeParam>::kKeying == tables::Keying::kAppend;
    written.push_back(makeRow<TypeParam>(appended ? row % 70 : row));
  }
  {
    auto writer = Writer::open(path);
    ASSERT_TRUE(writer) << writer.error().message;
    for (std::size_t row = 0; row < written.size(); ++row) {
      (*writer)->add(written[row]);
      if (row == 150) (*writer)->flush();
    }
    ASSERT_TRUE((*writer)->close());
    EXPECT_EQ((*writer)->stats().written, written.size());
    EXPECT_GE((*writer)->stats().batches, 2u);
  }
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message;
  auto read = (*reader)->load<TypeParam>();
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, inReadOrder(written));
}

TEST(RunRoundTrip, RunInfoIsReplacedNotDuplicated) {
  testing::TempDir dir;
  const std::string path = dir.file("run.db");
  const RunInfo first = makeRow<RunInfo>(1);
  RunInfo second = makeRow<RunInfo>(2);
  second.end_ns = -1;
  {
    auto writer = Writer::open(path);
    ASSERT_TRUE(writer);
    (*writer)->setRun(first);
    (*writer)->flush();
    (*writer)->setRun(second);
    ASSERT_TRUE((*writer)->close(/*end_ns=*/777));
  }
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader);
  auto run = (*reader)->run();
  ASSERT_TRUE(run);
  RunInfo expected = second;
  expected.end_ns = 777;
  EXPECT_EQ(*run, expected);
  auto counts = (*reader)->counts();
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->count("run"), 0u) << "the run table is metadata, not a count";
}

TEST(RunRoundTrip, NewStoreHasStartAnchor) {
  testing::TempDir dir;
  const base::Nanos before = base::monotonicNow();
  {
    auto writer = Writer::open(dir.file("run.db"));
    ASSERT_TRUE(writer);
    ASSERT_TRUE((*writer)->close());
  }
  auto reader = Reader::open(dir.file("run.db"));
  ASSERT_TRUE(reader);
  auto run = (*reader)->run();
  ASSERT_TRUE(run);
  EXPECT_GE(run->start_ns, before);
  EXPECT_GT(run->start_wall_ns, 1'600'000'000'000'000'000LL);
}

TEST(TimeRangeLoad, ReturnsOnlyOverlappingRows) {
  testing::TempDir dir;
  {
    auto writer = Writer::open(dir.file("run.db"));
    ASSERT_TRUE(writer);
    for (int i = 0; i < 10; ++i) {
      Kernel k;
      k.name = "k" + std::to_string(i);
      k.start_ns = i * 100;
      k.end_ns = i * 100 + 50;
      (*writer)->add(k);
    }
    ASSERT_TRUE((*writer)->close());
  }
  auto reader = Reader::open(dir.file("run.db"));
  ASSERT_TRUE(reader);
  auto rows = (*reader)->load<Kernel>({TimeRange{260, 420}, std::nullopt});
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 2u);  // [300,350) and [400,450); [200,250) ends before 260
  EXPECT_EQ((*rows)[0].name, "k3");
  EXPECT_EQ((*rows)[1].name, "k4");
  auto span = (*reader)->timeSpan();
  ASSERT_TRUE(span && span->has_value());
  EXPECT_EQ((*span)->begin_ns, 0);
  EXPECT_EQ((*span)->end_ns, 950);
}

}  // namespace
}  // namespace torchscope::store
