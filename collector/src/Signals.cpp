#include "Signals.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <thread>

#include "Collector.h"
#include "Environment.h"
#include "torchscope/store/Writer.h"

namespace torchscope::collector {

namespace {

constexpr std::array<int, 2> kSignals = {SIGTERM, SIGINT};
// How long a handler waits for the store to close before the signal takes its course anyway. The close
// takes milliseconds; the bound keeps a stuck one from holding the job past its launcher's grace period
// (docker stop waits 10 s, then kills), which would change how it ends.
constexpr int kDefaultShutdownWaitMs = 3000;
int shutdown_wait_ms = kDefaultShutdownWaitMs;  // TORCHSCOPE_SIGNAL_WAIT_MS, read before the handlers exist

struct HelperChannel {
  int request[2] = {-1, -1};  // handler -> helper: close the store
  int reply[2] = {-1, -1};    // helper -> handler: closed
  int owed[2] = {-1, -1};     // handler -> watchdog: the handler stopped waiting
  std::atomic<pid_t> pid{-1};   // the process whose helper threads are running
};

HelperChannel channel;
struct sigaction previous_actions[NSIG];
std::atomic<bool> installed{false};
// The signal the process still has to die by, once its store is closed: set by a handler that stopped
// waiting for the close.
std::atomic<int> owed_signal{0};

// The default action, then the signal to the whole process: it dies by it. Async-signal-safe.
void dieBy(int signal_number) {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal_number, &default_action, nullptr);
  kill(getpid(), signal_number);
}

// Starts a thread that takes none of the handled signals (it must never run the handler, which
// waits for the helper).
template <class Body>
void startQuietThread(const sigset_t& blocked, Body body) {
  sigset_t previous_mask;
  pthread_sigmask(SIG_BLOCK, &blocked, &previous_mask);
  std::thread(std::move(body)).detach();
  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
}

void startHelper() {
  if (pipe2(channel.request, O_CLOEXEC) != 0 || pipe2(channel.reply, O_CLOEXEC) != 0 ||
      pipe2(channel.owed, O_CLOEXEC) != 0) {
    return;
  }
  sigset_t handled;
  sigemptyset(&handled);
  for (int signal_number : kSignals) sigaddset(&handled, signal_number);
  startQuietThread(handled, [request_fd = channel.request[0], reply_fd = channel.reply[1]] {
    char signal_byte = 0;
    while (read(request_fd, &signal_byte, 1) == 1) {
      try {
        // The process is about to die by this signal: a launcher would report 128+n.
        Collector::instance().shutdown(128 + static_cast<unsigned char>(signal_byte));
      } catch (...) {
      }
      ssize_t ignored = write(reply_fd, &signal_byte, 1);
      (void)ignored;
      payOwedSignal();
    }
  });
  // The watchdog bounds a close that goes on after its handler stopped waiting: one more wait, then
  // the signal takes its course. It takes no signal at all, so nothing cuts its sleep short.
  sigset_t all;
  sigfillset(&all);
  startQuietThread(all, [owed_fd = channel.owed[0]] {
    char signal_byte = 0;
    while (read(owed_fd, &signal_byte, 1) == 1) {
      poll(nullptr, 0, shutdown_wait_ms);
      payOwedSignal();
    }
  });
  channel.pid = getpid();
}

// Waits up to shutdown_wait_ms for the helper's reply; another signal (SIGCHLD, ...) may interrupt
// the wait, which then goes on for the time left.
bool waitForClose() {
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  int waited_ms = 0;
  while (waited_ms < shutdown_wait_ms) {
    pollfd reply{channel.reply[0], POLLIN, 0};
    const int ready = poll(&reply, 1, shutdown_wait_ms - waited_ms);
    if (ready == 1) {
      char reply_byte = 0;
      ssize_t ignored = read(channel.reply[0], &reply_byte, 1);
      (void)ignored;
      return true;
    }
    if (ready == 0 || errno != EINTR) return false;
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    waited_ms = static_cast<int>((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000);
  }
  return false;
}

void onSignal(int signal_number, siginfo_t* info, void* context) {
  const struct sigaction& before = previous_actions[signal_number];
  if (isHandlerFunction(before)) {
    if ((before.sa_flags & SA_SIGINFO) != 0) {
      before.sa_sigaction(signal_number, info, context);
    } else {
      before.sa_handler(signal_number);
    }
    return;
  }
  if (before.sa_handler == SIG_IGN) return;
  // A close the job was let go on during is under way: the process dies when it ends.
  if (owed_signal.load() != 0) return;
  if (store::callingThreadIsInsideAWriter()) {
    // This thread holds the store's queue lock, which the close needs: waiting here would only run
    // out the clock. The signal comes back, on this thread, once the lock is released.
    store::raiseWhenLeavingTheWriter(signal_number);
    return;
  }
  const int saved_errno = errno;
  if (channel.pid.load() == getpid()) {
    const char signal_byte = static_cast<char>(signal_number);
    if (write(channel.request[1], &signal_byte, 1) == 1 && !waitForClose()) {
      // This thread may hold a lock the close needs that is not ours (malloc's arena lock, seen with
      // gdb): let it go on, and have the process die by the signal as soon as the store is closed, or
      // after one more wait (the watchdog).
      owed_signal.store(signal_number);
      pollfd reply{channel.reply[0], POLLIN, 0};
      if (poll(&reply, 1, 0) != 1) {
        ssize_t ignored = write(channel.owed[1], &signal_byte, 1);
        (void)ignored;
        errno = saved_errno;
        return;
      }
      owed_signal.store(0);  // closed meanwhile: die here
    }
  }
  // Default action from here: the signal is delivered again once this handler returns.
  sigaction(signal_number, &before, nullptr);
  raise(signal_number);
  errno = saved_errno;
}

// TORCHSCOPE_SIGNAL_WAIT_MS when it is a whole number of milliseconds (0: do not wait), else the default.
int shutdownWaitFromEnvironment() { return static_cast<int>(settingInteger(settings::kSignalWaitMs)); }

}  // namespace

void installSignalHandlers() {
  if (installed.exchange(true)) return;
  shutdown_wait_ms = shutdownWaitFromEnvironment();
  startHelper();
  for (int signal_number : kSignals) {
    struct sigaction action {};
    action.sa_sigaction = &onSignal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(signal_number, &action, &previous_actions[signal_number]);
  }
}

void payOwedSignal() {
  const int signal_number = owed_signal.exchange(0);
  if (signal_number != 0) dieBy(signal_number);
}

void restartSignalHelperInChild() {
  if (!installed.load()) return;
  owed_signal.store(0);  // the parent's, were it forking while it ran on after a signal
  startHelper();
}

}  // namespace torchscope::collector
