// The collector's memory cap: two threads record steps through the C API as fast as they can, far
// faster than SQLite stores them, so the queue fills and drops. The process's resident memory may
// grow by the budget (TORCHSCOPE_BUFFER_MB, set by ctest) plus a stated margin and no more, while
// recording and while closing; every step is either in the store or in its drop count.
// Started by ctest with TORCHSCOPE_OUTPUT set: the library opens its store when it loads. Memory
// capture is off (TORCHSCOPE_MEMORY=0) so that steps are the only records that can be dropped.
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "torchscope/collector/collector.h"
#include "torchscope/store/Reader.h"

// The collector records outside Python only when there is a GPU to trace: this symbol makes the
// test look like the interpreter whose bridge calls the same C API.
extern "C" __attribute__((visibility("default"))) int Py_BytesMain(int, char**) { return 0; }

namespace {

constexpr int kThreads = 2;
constexpr std::int64_t kStepsPerThread = 1'000'000;
// Beyond the budget: SQLite's own structures and its page headers (about 2 MiB), the test's
// threads and their allocator arenas.
constexpr std::int64_t kMarginKib = 8 * 1024;

// Resident memory counts the sanitizers' shadow memory and quarantine: only the counts are checked
// there (GCC names them with macros, clang with __has_feature).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kMeasureMemory = false;
#elif defined(__has_feature)
constexpr bool kMeasureMemory = !(__has_feature(address_sanitizer) || __has_feature(thread_sanitizer));
#else
constexpr bool kMeasureMemory = true;
#endif

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM").
std::int64_t statusKib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::atoll(line.c_str() + field.size() + 1);
  }
  return -1;
}

TEST(CollectorCap, MemoryStaysWithinTheBudgetAndEveryStepIsCounted) {
  ASSERT_EQ(torchscope_is_active(), 1) << "run with TORCHSCOPE_OUTPUT set";
  const char* budget_mib = std::getenv("TORCHSCOPE_BUFFER_MB");
  ASSERT_NE(budget_mib, nullptr) << "run with TORCHSCOPE_BUFFER_MB set";
  const std::int64_t budget_kib = std::atoll(budget_mib) * 1024;
  const std::string path = torchscope_store_path();
  const std::int64_t baseline_kib = statusKib("VmRSS");

  std::vector<std::thread> callers;
  for (int t = 0; t < kThreads; ++t) {
    callers.emplace_back([t] {
      for (std::int64_t i = 0; i < kStepsPerThread; ++i) {
        torchscope_record_step(t * kStepsPerThread + i, i * 10, i * 10 + 5, "marker");
      }
    });
  }
  for (auto& caller : callers) caller.join();
  const std::int64_t recording_peak_kib = statusKib("VmHWM");
  // The queue drains, so that the rows written at exit (the process's end) are never dropped.
  torchscope_flush();
  torchscope_finish(0);
  const std::int64_t peak_kib = statusKib("VmHWM");

  if (kMeasureMemory) {
    EXPECT_LE(recording_peak_kib - baseline_kib, budget_kib + kMarginKib) << "while recording";
    EXPECT_LE(peak_kib - baseline_kib, budget_kib + kMarginKib) << "recording and closing";
  }

  auto reader = torchscope::store::Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message;
  auto counts = (*reader)->counts();
  ASSERT_TRUE(counts);
  auto diagnostics = (*reader)->load<torchscope::store::Diagnostic>();
  ASSERT_TRUE(diagnostics);
  std::int64_t dropped = 0;
  for (const auto& diagnostic : *diagnostics) {
    if (diagnostic.source == "store") dropped += diagnostic.count;
  }
  EXPECT_EQ(counts->at("steps") + dropped, kThreads * kStepsPerThread);
  EXPECT_EQ(counts->at("processes"), 1);
  std::printf("steps stored %lld, dropped %lld; resident memory grew by %.1f MiB while recording, %.1f MiB in all "
              "(budget %.0f MiB)\n",
              static_cast<long long>(counts->at("steps")), static_cast<long long>(dropped),
              static_cast<double>(recording_peak_kib - baseline_kib) / 1024,
              static_cast<double>(peak_kib - baseline_kib) / 1024, static_cast<double>(budget_kib) / 1024);
}

}  // namespace
