// The collector library itself (linked, not preloaded) under concurrent callers and a fork: what
// the sanitizer builds run, since they cannot preload an instrumented library into Python.
// Started by ctest with TORCHSCOPE_OUTPUT set: the library opens its store when it loads.
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "torchscope/collector/collector.h"
#include "torchscope/store/Reader.h"

// The collector records outside Python only when there is a GPU to trace: this symbol makes the
// test look like the interpreter whose bridge calls the same C API.
extern "C" __attribute__((visibility("default"))) int Py_BytesMain(int, char**) { return 0; }

namespace {

constexpr int kThreads = 8;
constexpr int kStepsPerThread = 5000;
constexpr int kChildSteps = 100;
// A forked child of the collector opens its own store, so starts a writer thread after forking a
// multi-threaded process: ThreadSanitizer cannot follow that ("dup thread with used id"). The
// AddressSanitizer of this toolchain (clang 14) does not hold its allocator's locks across fork(),
// so a child can inherit them taken by a caller that was allocating and hang in its first malloc:
// under ASan the child is forked once the callers have joined. glibc's malloc (the dev build, and
// the jobs the collector runs in) is fork-safe, and there the fork races the callers.
#if defined(__SANITIZE_THREAD__)
constexpr bool kFork = false;
#else
constexpr bool kFork = true;
#endif
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kForkWhileCallersRun = false;
#elif defined(__has_feature)
constexpr bool kForkWhileCallersRun = !__has_feature(address_sanitizer);
#else
constexpr bool kForkWhileCallersRun = true;
#endif

std::int64_t stepsIn(const std::string& path) {
  auto reader = torchscope::store::Reader::open(path);
  if (!reader) return -1;
  auto counts = (*reader)->counts();
  return counts ? counts->at("steps") : -1;
}

// The (pid, tid) pairs of a store's step rows with their counts. The collector caches both ids (ProcessIds.h):
// a fork() child and each thread must still get their own.
std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> stepIds(const std::string& path) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> ids;
  auto reader = torchscope::store::Reader::open(path);
  if (!reader) return ids;
  auto steps = (*reader)->load<torchscope::store::Step>();
  if (!steps) return ids;
  for (const auto& step : *steps) ids[{step.pid, step.tid}] += 1;
  return ids;
}

TEST(CollectorThreads, ConcurrentCallersAndAForkLoseNothing) {
  ASSERT_EQ(torchscope_is_active(), 1) << "run with TORCHSCOPE_OUTPUT set";
  const std::string path = torchscope_store_path();
  // The forking thread records too, so that its cached tid (the parent's) would show in the child were it kept.
  torchscope_record_step(0, 0, 1, "marker");
  std::vector<std::thread> callers;
  std::vector<std::int64_t> caller_tids(kThreads, -1);
  for (int t = 0; t < kThreads; ++t) {
    callers.emplace_back([t, &caller_tids] {
      caller_tids[t] = static_cast<std::int64_t>(syscall(SYS_gettid));
      for (int i = 0; i < kStepsPerThread; ++i) {
        torchscope_record_step(i, i * 10, i * 10 + 5, "marker");
        if (i % 500 == 0) {
          torchscope_record_json("syncs", R"({"sync_kind": "python", "op": "aten::item", "start_ns": 1, "end_ns": 2})");
          torchscope_record_json("run_attributes",
                                 ("{\"key\": \"thread" + std::to_string(t) + "\", \"value\": \"x\"}").c_str());
        }
        if (t == 0 && i % 1000 == 0) torchscope_flush();
      }
    });
  }
  // A fork (while the callers run, where the allocator allows it): the child writes a store of its own and ends
  // through _exit().
  const auto forkChild = [] {
    const pid_t pid = fork();
    if (pid == 0) {
      for (int i = 0; i < kChildSteps; ++i) torchscope_record_step(i, i, i + 1, "marker");
      _exit(0);
    }
    return pid;
  };
  pid_t child = kFork && kForkWhileCallersRun ? forkChild() : -1;
  for (auto& caller : callers) caller.join();
  if (kFork && !kForkWhileCallersRun) child = forkChild();
  ASSERT_TRUE(child > 0 || !kFork);
  int status = 0;
  if (kFork) {
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  torchscope_finish(0);

  EXPECT_EQ(stepsIn(path), kThreads * kStepsPerThread + 1);
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> expected{{{getpid(), getpid()}, 1}};
  for (const std::int64_t tid : caller_tids) expected[{getpid(), tid}] = kStepsPerThread;
  EXPECT_EQ(stepIds(path), expected) << "each caller's steps carry the process's pid and the caller's own tid";
  if (!kFork) return;
  const std::filesystem::path requested(path);
  const std::string child_store =
      (requested.parent_path() / (requested.stem().string() + "." + std::to_string(child) + ".db")).string();
  EXPECT_EQ(stepsIn(child_store), kChildSteps) << child_store;
  // The child's one thread is the one that forked (its tid is the child's pid), not any id cached in the parent.
  const std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> child_ids{{{child, child}, kChildSteps}};
  EXPECT_EQ(stepIds(child_store), child_ids);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(child_store + suffix);
}

}  // namespace
