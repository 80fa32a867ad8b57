// The GPU timeline under gpu/idle must not depend on the order rows are stored in: CUPTI buffers and Kineto files
// hold kernels only nearly in start order, and a long kernel (a collective, say) can land thousands of rows after
// its start. The same random run is written twice, sorted and disordered, and both stores must give the busy union
// computed here by sorting everything.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "Rules.h"
#include "TestSupport.h"
#include "torchscope/store/Writer.h"

namespace torchscope::analyzer::testing {
namespace {

constexpr base::Nanos kRunStart = 1'000'000'000;
constexpr int kKernelsPerDevice = 90'000;  // about 80 000 in the window: more than the reorder buffer holds (65 536)
constexpr base::Nanos kWarmUpNanos = 10'000'000;
constexpr base::Nanos kStepNanos = 240'000'000;

struct Work {
  std::int64_t device = 0;
  base::Nanos start = 0;
  base::Nanos end = 0;
  bool copy = false;
};

// Two devices: short kernels with random gaps, some long kernels spanning many of them, and copies.
std::vector<Work> randomRun(std::mt19937_64& random) {
  std::vector<Work> work;
  for (std::int64_t device = 0; device < 2; ++device) {
    base::Nanos t = kRunStart;
    std::uniform_int_distribution<base::Nanos> gap(0, 30'000);
    std::uniform_int_distribution<base::Nanos> length(1'000, 20'000);
    for (int i = 0; i < kKernelsPerDevice; ++i) {
      t += gap(random);
      const base::Nanos duration = i % 997 == 0 ? 5'000'000 : length(random);  // every 997th: a long one
      work.push_back({device, t, t + duration, false});
      if (i % 50 == 0) work.push_back({device, t + 2'000, t + 9'000, true});
    }
  }
  return work;
}

// The busy union per device in [begin, end) by sorting everything; returns idle seconds per device.
std::map<std::int64_t, double> idleBySorting(std::vector<Work> work, base::Nanos begin, base::Nanos end) {
  std::sort(work.begin(), work.end(), [](const Work& a, const Work& b) { return a.start < b.start; });
  std::map<std::int64_t, base::Nanos> busy_until;
  std::map<std::int64_t, base::Nanos> busy;
  for (const auto& item : work) {
    const base::Nanos start = std::max(item.start, begin);
    const base::Nanos stop = std::min(item.end, end);
    if (stop <= start) continue;
    auto [until, inserted] = busy_until.try_emplace(item.device, begin);
    busy[item.device] += std::max<base::Nanos>(0, stop - std::max(start, until->second));
    until->second = std::max(until->second, stop);
  }
  std::map<std::int64_t, double> idle;
  for (const auto& [device, nanos] : busy) idle[device] = toSeconds(static_cast<double>(end - begin - nanos));
  return idle;
}

// Stores `work` in the given order, with steps that put the steady state inside the run.
std::string writeStore(const TempDir& dir, const std::string& name, const std::vector<Work>& work) {
  const std::string path = dir.file(name);
  auto writer = store::Writer::open(path);
  EXPECT_TRUE(writer.ok());
  store::RunInfo run;
  run.start_ns = kRunStart;
  (*writer)->setRun(run);
  for (std::int64_t i = 0; i < 6; ++i) {
    store::Step step;
    step.index = i;
    step.start_ns = i == 0 ? kRunStart : kRunStart + kWarmUpNanos + (i - 1) * kStepNanos;
    step.end_ns = i == 0 ? kRunStart + kWarmUpNanos : step.start_ns + kStepNanos;
    step.source = "optimizer";
    (*writer)->add(step);
  }
  std::int64_t correlation = 0;
  for (const auto& item : work) {
    if (item.copy) {
      store::Memcpy copy;
      copy.device = item.device;
      copy.start_ns = item.start;
      copy.end_ns = item.end;
      copy.copy_kind = "HtoD";
      (*writer)->add(copy);
    } else {
      store::Kernel kernel;
      kernel.device = item.device;
      kernel.start_ns = item.start;
      kernel.end_ns = item.end;
      kernel.name = "kernel";
      kernel.correlation_id = ++correlation;
      (*writer)->add(kernel);
    }
  }
  EXPECT_TRUE((*writer)->close(kRunStart + kWarmUpNanos + 5 * kStepNanos).ok());
  return path;
}

// Storage order as producers write it: neighbours swapped; long kernels written when they end (hundreds of rows
// late: placed by the reorder buffer); a stretch of 3 000 rows reversed (too costly to place: set aside); and 30
// rows of the first third written at the very end, as by a buffer flushed last (more rows late than the reorder
// buffer holds: set aside).
std::vector<Work> disorder(std::vector<Work> work, std::mt19937_64& random) {
  for (std::size_t i = 0; i + 1 < work.size(); i += 7) std::swap(work[i], work[i + 1]);
  std::vector<Work> stored;
  std::vector<Work> long_ones;
  for (const auto& item : work) {
    (item.end - item.start > 1'000'000 ? long_ones : stored).push_back(item);
  }
  for (const auto& item : long_ones) {
    const auto after = std::find_if(stored.begin(), stored.end(),
                                    [&](const Work& other) { return other.device == item.device && other.start > item.end; });
    stored.insert(after, item);
  }
  const auto middle = static_cast<std::ptrdiff_t>(stored.size() / 2);
  std::reverse(stored.begin() + middle, stored.begin() + middle + 3'000);
  std::uniform_int_distribution<std::size_t> position(0, stored.size() / 3);
  for (int i = 0; i < 30; ++i) {
    const auto at = stored.begin() + static_cast<std::ptrdiff_t>(position(random));
    const Work late = *at;
    stored.erase(at);
    stored.push_back(late);
  }
  return stored;
}

KernelWindow windowOf(const std::string& path) {
  auto reader = store::Reader::open(path);
  EXPECT_TRUE(reader.ok());
  auto facts = collectFacts(**reader);
  EXPECT_TRUE(facts.ok()) << (facts.ok() ? "" : facts.error().message);
  return facts.ok() ? facts->kernel_window : KernelWindow{};
}

TEST(GpuTimeline, StorageOrderDoesNotChangeTheBusyUnion) {
  std::mt19937_64 random(20240611);
  const std::vector<Work> work = randomRun(random);
  TempDir dir;
  const KernelWindow sorted = windowOf(writeStore(dir, "sorted.db", work));
  const KernelWindow disordered = windowOf(writeStore(dir, "disordered.db", disorder(work, random)));

  // Steps 1..5 (the first is warm-up) are the window.
  ASSERT_EQ(sorted.begin_ns, kRunStart + kWarmUpNanos);
  ASSERT_EQ(sorted.end_ns, kRunStart + kWarmUpNanos + 5 * kStepNanos);
  const auto expected = idleBySorting(work, sorted.begin_ns, sorted.end_ns);
  for (const KernelWindow* window : {&sorted, &disordered}) {
    ASSERT_EQ(window->devices.size(), expected.size());
    double idle_s = 0;
    for (const auto& device : window->devices) {
      SCOPED_TRACE(device.device);
      EXPECT_NEAR(device.idle_s, expected.at(device.device), 1e-9);
      idle_s += device.idle_s;
    }
    EXPECT_NEAR(window->idle_s, idle_s, 1e-9);
    EXPECT_EQ(window->kernels, sorted.kernels);
  }
  EXPECT_GT(sorted.kernels, 0);
}

}  // namespace
}  // namespace torchscope::analyzer::testing
