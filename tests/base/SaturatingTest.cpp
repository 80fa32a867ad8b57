#include "torchscope/base/Saturating.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace torchscope::base {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

// Usable where the values are known at compile time.
static_assert(saturatingAdd(kMax, 1) == kMax);
static_assert(saturatingSub(kMin, 1) == kMin);
static_assert(spanNanos(kMin, kMax) == kMax);
static_assert(saturatingCast(1e300) == kMax);

TEST(Saturating, AddAndSubtractClampAtTheEdges) {
  EXPECT_EQ(saturatingAdd(2, 3), 5);
  EXPECT_EQ(saturatingAdd(-2, -3), -5);
  EXPECT_EQ(saturatingAdd(kMax, 1), kMax);
  EXPECT_EQ(saturatingAdd(kMax, kMax), kMax);
  EXPECT_EQ(saturatingAdd(kMin, -1), kMin);
  EXPECT_EQ(saturatingAdd(kMin, kMin), kMin);
  EXPECT_EQ(saturatingAdd(kMax, kMin), -1);
  EXPECT_EQ(saturatingSub(5, 3), 2);
  EXPECT_EQ(saturatingSub(kMax, -1), kMax);
  EXPECT_EQ(saturatingSub(kMax, kMin), kMax);
  EXPECT_EQ(saturatingSub(kMin, 1), kMin);
  EXPECT_EQ(saturatingSub(kMin, kMax), kMin);
  EXPECT_EQ(saturatingSub(0, kMin), kMax);  // the negation of INT64_MIN
  EXPECT_EQ(saturatingSub(-1, kMin), kMax);
}

TEST(Saturating, MultiplyClampsWithTheProductsSign) {
  EXPECT_EQ(saturatingMul(1'000, -7), -7'000);
  EXPECT_EQ(saturatingMul(kMax / 1000 + 1, 1000), kMax);
  EXPECT_EQ(saturatingMul(kMin / 1000 - 1, 1000), kMin);
  EXPECT_EQ(saturatingMul(kMin, -1), kMax);
  EXPECT_EQ(saturatingMul(-kMax, -2), kMax);
  EXPECT_EQ(saturatingMul(kMax, -2), kMin);
  EXPECT_EQ(saturatingMul(kMin, 0), 0);
}

TEST(Saturating, SpanIsNeverNegativeAndAtMostInt64Max) {
  EXPECT_EQ(spanNanos(10, 25), 15);
  EXPECT_EQ(spanNanos(25, 10), 0);  // end before start
  EXPECT_EQ(spanNanos(7, 7), 0);
  EXPECT_EQ(spanNanos(kMin, kMax), kMax);
  EXPECT_EQ(spanNanos(kMax, kMin), 0);
  EXPECT_EQ(spanNanos(kMin, 0), kMax);
  EXPECT_EQ(spanNanos(-1, kMax), kMax);
  EXPECT_EQ(spanNanos(0, kMax), kMax);
  EXPECT_EQ(spanNanos(kMin, kMin + 5), 5);
}

TEST(Saturating, CastClampsDoublesOutsideInt64AndNanIsZero) {
  EXPECT_EQ(saturatingCast(1.9), 1);
  EXPECT_EQ(saturatingCast(-1.9), -1);
  EXPECT_EQ(saturatingCast(1e300), kMax);
  EXPECT_EQ(saturatingCast(-1e300), kMin);
  EXPECT_EQ(saturatingCast(std::numeric_limits<double>::infinity()), kMax);
  EXPECT_EQ(saturatingCast(-std::numeric_limits<double>::infinity()), kMin);
  EXPECT_EQ(saturatingCast(std::nan("")), 0);
  EXPECT_EQ(saturatingCast(9223372036854775808.0), kMax);  // 2^63, what INT64_MAX rounds to
  EXPECT_EQ(saturatingCast(-9223372036854775808.0), kMin);
  EXPECT_EQ(saturatingCast(9223372036854774784.0), 9223372036854774784);  // the largest double below 2^63
}

}  // namespace
}  // namespace torchscope::base
