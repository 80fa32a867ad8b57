// This process's threads as the kernel counts them: how often a named thread woke up.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace torchscope::testing {

// Voluntary context switches of this process's thread named `name` (each wake-up of a sleeping thread is one), -1
// when no thread has that name.
[[nodiscard]] std::int64_t wakeUpsOf(const std::string& name);

// Whether this process has no thread named `name` within `patience`. A joined thread may still be listed for a
// moment: join() returns once the kernel clears the thread's id, a little before /proc/self/task drops it (seen on a
// loaded 2-core machine).
[[nodiscard]] bool threadGone(const std::string& name,
                              std::chrono::milliseconds patience = std::chrono::milliseconds(1000));

}  // namespace torchscope::testing
