#include "ProcessIds.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace torchscope::collector {
namespace {

std::atomic<std::int64_t> cached_pid{0};
// Bumped in a fork() child, whose one thread still holds its parent's cached id.
std::atomic<unsigned> fork_generation{0};

}  // namespace

std::int64_t processId() {
  std::int64_t pid = cached_pid.load(std::memory_order_relaxed);
  if (pid == 0) {
    pid = ::getpid();
    cached_pid.store(pid, std::memory_order_relaxed);
  }
  return pid;
}

std::int64_t threadId() {
  thread_local unsigned generation = ~0U;
  thread_local std::int64_t tid = -1;
  const unsigned current = fork_generation.load(std::memory_order_acquire);
  if (generation != current) {
    tid = static_cast<std::int64_t>(::syscall(SYS_gettid));
    generation = current;
  }
  return tid;
}

void forgetProcessIdsAfterFork() {
  cached_pid.store(0, std::memory_order_relaxed);
  fork_generation.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace torchscope::collector
