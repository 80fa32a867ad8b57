// The store's one time base: integer nanoseconds on CLOCK_MONOTONIC, with a wall-clock
// anchor recorded once per run so that times can be shown as dates.
#pragma once

#include <cstdint>
#include <ctime>

namespace torchscope::base {

using Nanos = std::int64_t;

inline Nanos clockNanos(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<Nanos>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline Nanos monotonicNow() { return clockNanos(CLOCK_MONOTONIC); }
inline Nanos wallNow() { return clockNanos(CLOCK_REALTIME); }

}  // namespace torchscope::base
