// A signal that lands on a thread inside Writer::add() is handed back to that thread once the call
// has ended: what the collector's SIGTERM handler relies on (it waits for a close that needs the
// queue's lock, so it must never wait on a thread that holds it).
#include <signal.h>
#include <sys/time.h>

#include <csignal>
#include <string>

#include <gtest/gtest.h>

#include "torchscope/store/Writer.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::store {
namespace {

volatile std::sig_atomic_t landed_inside = 0;
volatile std::sig_atomic_t came_back = 0;
volatile std::sig_atomic_t came_back_inside = 0;
Writer* writer_under_test = nullptr;

void onTimer(int /*signal*/) {
  if (!callingThreadIsInsideAWriter()) return;
  landed_inside = landed_inside + 1;
  raiseWhenLeavingTheWriter(SIGUSR1);
}

void onCameBack(int /*signal*/) {
  came_back = came_back + 1;
  if (callingThreadIsInsideAWriter()) came_back_inside = came_back_inside + 1;
  // Takes the queue's lock, as the collector's close does: this would never return if the call that
  // deferred the signal still held it.
  (void)writer_under_test->stats();
}

struct sigaction handle(int signal_number, void (*handler)(int)) {
  struct sigaction action {};
  struct sigaction before {};
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(signal_number, &action, &before);
  return before;
}

TEST(WriterSignals, ASignalInsideAddComesBackOnceTheCallHasReleasedTheLock) {
  EXPECT_FALSE(callingThreadIsInsideAWriter());
  const testing::TempDir scratch;
  WriterOptions options;
  options.overflow = OverflowPolicy::kDrop;
  auto writer = Writer::open((scratch.path() / "signals.db").string(), options);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  writer_under_test = (*writer).get();

  const struct sigaction timer_before = handle(SIGALRM, &onTimer);
  const struct sigaction back_before = handle(SIGUSR1, &onCameBack);
  // The writer thread blocks every signal, so the timer's signals land on this thread, at random
  // points of the loop below; the long name makes each add() copy for a while under the lock.
  itimerval every_100us{{0, 100}, {0, 100}};
  setitimer(ITIMER_REAL, &every_100us, nullptr);
  Diagnostic diagnostic{"test", "info", std::string(4096, 'x'), 1};
  for (int i = 0; i < 5'000'000 && landed_inside < 50; ++i) (*writer)->add(diagnostic);
  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  sigaction(SIGALRM, &timer_before, nullptr);
  sigaction(SIGUSR1, &back_before, nullptr);

  EXPECT_GT(landed_inside, 0);
  // One deferred signal per call: two landing in the same call come back once.
  EXPECT_GT(came_back, 0);
  EXPECT_LE(came_back, landed_inside);
  EXPECT_EQ(came_back_inside, 0);
  EXPECT_FALSE(callingThreadIsInsideAWriter());
  EXPECT_TRUE((*writer)->close().ok());
  writer_under_test = nullptr;
}

}  // namespace
}  // namespace torchscope::store
