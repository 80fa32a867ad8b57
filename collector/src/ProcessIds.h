// The calling process's and thread's ids without a system call on every step: glibc no longer caches getpid(),
// and each call is a trip into the kernel (a few hundred nanoseconds on a VM).
#pragma once

#include <cstdint>

namespace torchscope::collector {

// getpid(), read once per process.
[[nodiscard]] std::int64_t processId();
// gettid() of the calling thread, read once per thread and process.
[[nodiscard]] std::int64_t threadId();
// In a fork() child, before anything asks for the ids (Lifecycle's atfork handler): the child's are new.
void forgetProcessIdsAfterFork();

}  // namespace torchscope::collector
