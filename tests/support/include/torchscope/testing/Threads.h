// This process's threads as the kernel counts them: how often a named thread woke up.
#pragma once

#include <cstdint>
#include <string>

namespace torchscope::testing {

// Voluntary context switches of this process's thread named `name` (each wake-up of a sleeping thread is one), -1
// when no thread has that name.
[[nodiscard]] std::int64_t wakeUpsOf(const std::string& name);

}  // namespace torchscope::testing
