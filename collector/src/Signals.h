// SIGTERM/SIGINT handling that saves the store when a signal is about to end the process, and
// otherwise leaves the job's signal semantics exactly as they were.
#pragma once

namespace torchscope::collector {

// Installs the handlers once per process. A handler that finds a previous handler function
// calls it; one that finds SIG_IGN does nothing; one that finds SIG_DFL has the store closed
// (by a helper thread, since little is safe inside a signal handler), restores SIG_DFL and
// re-raises, so the process still dies by the same signal.
void installSignalHandlers();
// In a forked child: the helper thread did not survive fork(); start a new one.
void restartSignalHelperInChild();

}  // namespace torchscope::collector
