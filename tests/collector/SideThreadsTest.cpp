// The collector's side threads (the host-memory sampler, the stack sampler) sleep while the capture window is closed
// (the store's writer too, while nothing is queued: WriterTest): each wake-up costs the job's machine a context switch
// (about 30 us of CPU on the 2-core development VM), for nothing while nothing is recorded. Counted as the threads'
// voluntary context switches.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include <gtest/gtest.h>

#include <memory>

#include "HostMemory.h"
#include "StackSampler.h"
#include "Window.h"
#include "torchscope/testing/TempDir.h"
#include "torchscope/testing/Threads.h"

namespace {

using namespace std::chrono_literals;
using torchscope::collector::CaptureWindow;
using torchscope::testing::threadGone;
using torchscope::testing::wakeUpsOf;

// A window of steps from 5: closed until step 4 ends.
void beginClosed(CaptureWindow& window) {
  torchscope::collector::WindowSettings steps_from_5;
  steps_from_5.mode = torchscope::collector::WindowMode::kSteps;
  steps_from_5.first_step = 5;
  window.begin(steps_from_5, 0, nullptr);
}

// A store and a window closed until step 4 ends, for a host-memory sampler.
class HostMemoryWindow : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(writer_.ok());
    beginClosed(window_);
    ASSERT_FALSE(window_.isOpen());
  }
  const torchscope::testing::TempDir dir_;
  torchscope::Result<std::unique_ptr<torchscope::store::Writer>> writer_ =
      torchscope::store::Writer::open((dir_.path() / "run.db").string());
  CaptureWindow window_;
};

TEST_F(HostMemoryWindow, TheHostMemorySamplerSleepsWhileTheWindowIsClosedAndWakesOnceItOpens) {
  torchscope::collector::HostMemorySampler sampler(**writer_, getpid(), 10ms, window_);
  std::this_thread::sleep_for(100ms);  // the thread starts and names itself
  const std::int64_t closed_from = wakeUpsOf("torchscope-mem");
  ASSERT_GE(closed_from, 0);
  std::this_thread::sleep_for(300ms);
  const std::int64_t closed_to = wakeUpsOf("torchscope-mem");
  EXPECT_LE(closed_to - closed_from, 2) << "a 10 ms period wakes about 30 times in 300 ms";
  window_.admitStep(4, 1);  // step 4's end opens a window of steps from 5
  ASSERT_TRUE(window_.isOpen());
  std::this_thread::sleep_for(300ms);
  EXPECT_GE(wakeUpsOf("torchscope-mem") - closed_to, 10) << "the sampler runs again at its period";
  sampler.stop();
  EXPECT_TRUE(threadGone("torchscope-mem")) << "stopped: the thread is gone";
}

TEST_F(HostMemoryWindow, AHostMemorySamplerWaitingForAClosedWindowStops) {
  torchscope::collector::HostMemorySampler sampler(**writer_, getpid(), 10ms, window_);
  std::this_thread::sleep_for(50ms);
  const auto before = std::chrono::steady_clock::now();
  sampler.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);
  EXPECT_TRUE(threadGone("torchscope-mem"));
}

TEST(SideThreads, TheStackSamplerDoesNotTickWhileTheWindowIsClosed) {
  CaptureWindow window;
  beginClosed(window);
  // No interpreter in this process: an open window's ticks find none and return, which still wakes the thread.
  torchscope::collector::StackSampler sampler(getpid(), 200, window);
  std::this_thread::sleep_for(100ms);
  const std::int64_t closed_from = wakeUpsOf("torchscope-smp");
  ASSERT_GE(closed_from, 0);
  std::this_thread::sleep_for(300ms);
  const std::int64_t closed_to = wakeUpsOf("torchscope-smp");
  EXPECT_LE(closed_to - closed_from, 2) << "200 Hz wakes about 60 times in 300 ms";
  window.admitStep(4, 1);
  std::this_thread::sleep_for(300ms);
  EXPECT_GE(wakeUpsOf("torchscope-smp") - closed_to, 20) << "it ticks again once the window opens";
  const auto before = std::chrono::steady_clock::now();
  sampler.stop(1000ms);
  EXPECT_LT(std::chrono::steady_clock::now() - before, 500ms);
}

TEST(SideThreads, AStackSamplerWaitingForAClosedWindowStopsAtOnce) {
  CaptureWindow window;
  beginClosed(window);
  torchscope::collector::StackSampler sampler(getpid(), 200, window);
  std::this_thread::sleep_for(50ms);
  const auto before = std::chrono::steady_clock::now();
  sampler.stop(1000ms);
  EXPECT_LT(std::chrono::steady_clock::now() - before, 500ms);
  EXPECT_TRUE(threadGone("torchscope-smp")) << "the thread ended";
}

}  // namespace
