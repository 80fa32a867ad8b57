// SIGTERM/SIGINT handling that saves the store when a signal is about to end the process, and
// otherwise leaves the job's signal semantics exactly as they were.
#pragma once

#include <pthread.h>

#include <csignal>

namespace torchscope::collector {

// Holds SIGTERM/SIGINT back on the calling thread while it closes the store: a handler run on
// this thread in the middle of the close would wait for the helper, which waits for this close.
// The signal is delivered, and handled as usual, when the close is done.
class DeferredTermination {
 public:
  DeferredTermination() {
    sigset_t handled;
    sigemptyset(&handled);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGINT);
    pthread_sigmask(SIG_BLOCK, &handled, &previous_);
  }
  ~DeferredTermination() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  DeferredTermination(const DeferredTermination&) = delete;
  DeferredTermination& operator=(const DeferredTermination&) = delete;

 private:
  sigset_t previous_{};
};

// Installs the handlers once per process. A handler that finds a previous handler function
// calls it; one that finds SIG_IGN does nothing; one that finds SIG_DFL has the store closed
// (by a helper thread, since little is safe inside a signal handler), restores SIG_DFL and
// re-raises, so the process still dies by the same signal.
void installSignalHandlers();

// Whether a sigaction names a handler function (not SIG_DFL or SIG_IGN).
[[nodiscard]] inline bool isHandlerFunction(const struct sigaction& action) {
  if ((action.sa_flags & SA_SIGINFO) != 0) return action.sa_sigaction != nullptr;
  return action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN;
}
// When the close outlasts TORCHSCOPE_SIGNAL_WAIT_MS, the handler lets its thread go on (it may hold a
// lock the close needs) and the process still owes the signal: the helper raises it once the store is
// closed, a watchdog after one more wait, and an exit in between (exit(), _exit()) ends by it too, so
// the job ends as the signal would have ended it. Async-signal-safe.
void payOwedSignal();
// In a forked child: the helper threads did not survive fork(); start new ones.
void restartSignalHelperInChild();

}  // namespace torchscope::collector
