// The bridge's JSON objects become store records column by column, as the tables declare them.
#include "JsonRecord.h"

#include <gtest/gtest.h>

namespace torchscope::collector {
namespace {

using nlohmann::json;

// An object naming every declared column of T with a value of its own, and the record it must make.
template <class T>
std::pair<json, T> everyColumn() {
  json in = json::object();
  T expected;
  int seed = 0;
  store::schema::forEachColumn<T>([&](const auto& column) {
    auto& field = expected.*(column.member);
    using Field = std::decay_t<decltype(field)>;
    const std::string key(column.name);
    ++seed;
    if constexpr (std::is_same_v<Field, std::string>) {
      if (column.role == store::schema::Role::kJsonArray) {
        in[key] = json::array({key, seed});
        field = in[key].dump();
      } else if (column.role == store::schema::Role::kJsonObject) {
        in[key] = json{{key, seed}};
        field = in[key].dump();
      } else {
        in[key] = key + "-" + std::to_string(seed);
        field = key + "-" + std::to_string(seed);
      }
    } else if constexpr (std::is_same_v<Field, bool>) {
      in[key] = !field;
      field = !field;
    } else {
      in[key] = 1000 + seed;
      field = static_cast<Field>(1000 + seed);
    }
  });
  return {in, expected};
}

template <class T>
class JsonRecordColumns : public ::testing::Test {};
using BridgeRecords = ::testing::Types<store::Compile, store::GraphBreak, store::Recompile, store::Sync, store::CpuOp,
                                       store::Device, store::MemoryHolder, store::RunAttribute, store::Collective,
                                       store::CompiledRegion, store::OpCensus>;
TYPED_TEST_SUITE(JsonRecordColumns, BridgeRecords);

TYPED_TEST(JsonRecordColumns, EveryDeclaredColumnIsRead) {
  const auto [in, expected] = everyColumn<TypeParam>();
  EXPECT_EQ(recordFromJson<TypeParam>(in), expected) << in.dump();
}

TYPED_TEST(JsonRecordColumns, AnAbsentColumnKeepsItsDefault) {
  TypeParam expected;
  store::schema::forEachColumn<TypeParam>([&](const auto& column) {
    if constexpr (std::is_same_v<typename std::decay_t<decltype(column)>::Type, std::string>) {
      if (column.role == store::schema::Role::kJsonArray) expected.*(column.member) = "[]";
      if (column.role == store::schema::Role::kJsonObject) expected.*(column.member) = "{}";
    }
  });
  EXPECT_EQ(recordFromJson<TypeParam>(json::object()), expected);
}

TEST(JsonRecord, ValuesOfAnotherTypeReadAsTheBridgeMeansThem) {
  const json in = {{"frame_id", 7.9},       {"line", true},       {"reason", json{{"a", 1}}}, {"file", nullptr},
                   {"hints", "not a list"}, {"frame_skipped", 1}, {"attempt", "not a number"}};
  const auto out = recordFromJson<store::GraphBreak>(in);
  EXPECT_EQ(out.frame_id, 7);  // truncated
  EXPECT_EQ(out.line, 1);
  EXPECT_EQ(out.reason, R"({"a":1})");  // JSON text
  EXPECT_EQ(out.file, "");
  EXPECT_EQ(out.hints, "[]");
  EXPECT_TRUE(out.frame_skipped);
  EXPECT_EQ(out.attempt, store::GraphBreak{}.attempt);
}

}  // namespace
}  // namespace torchscope::collector
