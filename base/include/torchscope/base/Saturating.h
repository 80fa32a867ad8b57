// Arithmetic on the integers a store holds (times, counts, bytes) that clamps at the int64 edges
// instead of overflowing. A store is whatever its file says: a hand-edited or damaged store, a bad
// clock or an importer's mistake can put any int64 in any column, start after end among them, and
// what reads it must still give an answer (docs/reliability.md).
#pragma once

#include <cstdint>
#include <limits>

#include "torchscope/base/Clock.h"

namespace torchscope::base {

inline constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

// a + b, clamped to [INT64_MIN, INT64_MAX].
[[nodiscard]] constexpr std::int64_t saturatingAdd(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? kInt64Max : kInt64Min;
}

// a - b, clamped to [INT64_MIN, INT64_MAX].
[[nodiscard]] constexpr std::int64_t saturatingSub(std::int64_t a, std::int64_t b) {
  std::int64_t difference = 0;
  if (!__builtin_sub_overflow(a, b, &difference)) return difference;
  return b < 0 ? kInt64Max : kInt64Min;
}

// a * b, clamped to [INT64_MIN, INT64_MAX] (microseconds to nanoseconds, say).
[[nodiscard]] constexpr std::int64_t saturatingMul(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (!__builtin_mul_overflow(a, b, &product)) return product;
  return (a < 0) == (b < 0) ? kInt64Max : kInt64Min;
}

// The length of [start, end]: end - start, 0 when end is before start, INT64_MAX when longer.
[[nodiscard]] constexpr Nanos spanNanos(Nanos start, Nanos end) { return end > start ? saturatingSub(end, start) : 0; }

// A double as an int64, clamped to [INT64_MIN, INT64_MAX]; NaN gives 0. For figures computed in
// floating point from store values (seconds times 1e9, a zoom's nanoseconds per pixel): casting one
// outside the range is undefined behaviour.
[[nodiscard]] constexpr std::int64_t saturatingCast(double value) {
  if (value != value) return 0;  // NaN (std::isnan is not constexpr before C++23)
  // 2^63 is exactly representable; INT64_MAX is not (it rounds up to 2^63).
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (value >= kTwoTo63) return kInt64Max;
  if (value <= -kTwoTo63) return kInt64Min;
  return static_cast<std::int64_t>(value);
}

}  // namespace torchscope::base
