// The host RSS the collector records with each step end: read from /proc/self/statm by hand (HostMemory.cpp), it
// must agree with the kernel's VmRSS of /proc/self/status and follow memory the process touches.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "HostMemory.h"
#include "Window.h"
#include "torchscope/testing/TempDir.h"

namespace {

std::int64_t statusRssBytes() {
  std::FILE* status = std::fopen("/proc/self/status", "re");
  if (status == nullptr) return -1;
  char line[256];
  std::int64_t rss = -1;
  while (std::fgets(line, sizeof(line), status) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) rss = std::atoll(line + 6) * 1024;
  }
  std::fclose(status);
  return rss;
}

TEST(HostMemory, CurrentRssAgreesWithTheKernelsVmRssAndFollowsTouchedMemory) {
  constexpr std::int64_t kTouched = std::int64_t{64} << 20;
  constexpr std::int64_t kSlack = std::int64_t{4} << 20;  // what the process itself may allocate between two reads
  const std::int64_t before = torchscope::collector::currentRssBytes();
  ASSERT_GT(before, 0);
  EXPECT_NEAR(static_cast<double>(before), static_cast<double>(statusRssBytes()), static_cast<double>(kSlack));
  std::vector<char> touched(static_cast<std::size_t>(kTouched), 1);
  const std::int64_t after = torchscope::collector::currentRssBytes();
  EXPECT_NEAR(static_cast<double>(after), static_cast<double>(statusRssBytes()), static_cast<double>(kSlack));
  EXPECT_GE(after - before, kTouched - kSlack) << "64 MiB touched";
  EXPECT_EQ(touched.back(), 1);
}

// Voluntary context switches of this process's thread named `name` (each wake-up of a sleeping thread is one), -1
// when no thread has that name.
std::int64_t wakeUpsOf(const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string thread_name;
    if (!std::getline(comm, thread_name) || thread_name != name) continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::atoll(line.c_str() + 24);
    }
  }
  return -1;
}

TEST(HostMemory, TheSamplerSleepsWhileTheWindowIsClosedAndWakesOnceItOpens) {
  using namespace std::chrono_literals;
  using torchscope::collector::CaptureWindow;
  const torchscope::testing::TempDir dir;
  auto writer = torchscope::store::Writer::open((dir.path() / "run.db").string());
  ASSERT_TRUE(writer.ok());
  CaptureWindow window;
  torchscope::collector::WindowSettings steps_from_5;
  steps_from_5.mode = torchscope::collector::WindowMode::kSteps;
  steps_from_5.first_step = 5;
  window.begin(steps_from_5, 0, nullptr);
  ASSERT_FALSE(window.isOpen());
  torchscope::collector::HostMemorySampler sampler(**writer, getpid(), 10ms, window);
  std::this_thread::sleep_for(100ms);  // the thread starts and names itself
  const std::int64_t closed_from = wakeUpsOf("torchscope-mem");
  ASSERT_GE(closed_from, 0);
  std::this_thread::sleep_for(300ms);
  const std::int64_t closed_to = wakeUpsOf("torchscope-mem");
  EXPECT_LE(closed_to - closed_from, 2) << "a 10 ms period wakes about 30 times in 300 ms";
  window.admitStep(4, 1);  // step 4's end opens a window of steps from 5
  ASSERT_TRUE(window.isOpen());
  std::this_thread::sleep_for(300ms);
  EXPECT_GE(wakeUpsOf("torchscope-mem") - closed_to, 10) << "the sampler runs again at its period";
  sampler.stop();
  EXPECT_EQ(wakeUpsOf("torchscope-mem"), -1) << "stopped: the thread is gone";
}

TEST(HostMemory, ASamplerWaitingForAClosedWindowStops) {
  using namespace std::chrono_literals;
  const torchscope::testing::TempDir dir;
  auto writer = torchscope::store::Writer::open((dir.path() / "run.db").string());
  ASSERT_TRUE(writer.ok());
  torchscope::collector::CaptureWindow window;
  torchscope::collector::WindowSettings steps_from_5;
  steps_from_5.mode = torchscope::collector::WindowMode::kSteps;
  steps_from_5.first_step = 5;
  window.begin(steps_from_5, 0, nullptr);
  torchscope::collector::HostMemorySampler sampler(**writer, getpid(), 10ms, window);
  std::this_thread::sleep_for(50ms);
  const auto before = std::chrono::steady_clock::now();
  sampler.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);
  EXPECT_EQ(wakeUpsOf("torchscope-mem"), -1);
}

}  // namespace
