// Load-time start-up, fork handling and exit handling of the collector library.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>

#include "Collector.h"
#include "Environment.h"
#include "Libtorch.h"
#include "ProcessIds.h"
#include "Signals.h"
#include "torchscope/collector/collector.h"

namespace torchscope::collector {
namespace {

pid_t initialized_pid = -1;
// From before fork() until after it the forking thread holds the collector's lock (the SIGTERM helper
// needs it), so it holds SIGTERM/SIGINT back meanwhile, in the parent and in the child.
thread_local std::optional<DeferredTermination> deferred_during_fork;

void onExit(int status) {
  try {
    const DeferredTermination deferred;
    Collector::instance().shutdown(status);
    payOwedSignal();  // delivered when `deferred` lets it through
  } catch (...) {
  }
}

// on_exit() rather than atexit(): it is handed the status given to exit(), including the value
// main() returned, so a job run without the launcher still records its exit code.
void onExitWithStatus(int status, void* /*unused*/) { onExit(status); }

void beforeFork() {
  try {
    deferred_during_fork.emplace();
    Collector::instance().beforeFork();
  } catch (...) {
  }
}

void afterForkInParent() {
  try {
    Collector::instance().afterForkInParent();
  } catch (...) {
  }
  deferred_during_fork.reset();
}

void afterForkInChild() {
  forgetProcessIdsAfterFork();
  try {
    initialized_pid = getpid();
    Collector::instance().afterForkInChild();
    restartSignalHelperInChild();
  } catch (...) {
  }
  deferred_during_fork.reset();
}

void initialize() {
  if (initialized_pid == getpid()) return;
  initialized_pid = getpid();
  if (settingOn(settings::kDisable)) return;
  claimJobEnvironment();
  const bool python = isPythonProcess();
  if (python) prepareBridgePath();
  Collector& collector = Collector::instance();
  const bool native_libtorch = !python && libtorchLoaded();
  collector.start(python, native_libtorch);
  // Registered after the store opened, so that it runs before the destructors of anything the
  // store created.
  static bool registered = false;
  if (!registered) {
    registered = true;
    pthread_atfork(&beforeFork, &afterForkInParent, &afterForkInChild);
    on_exit(&onExitWithStatus, nullptr);
  }
  // In Python the bridge installs them once the interpreter's own SIGINT handler is in place.
  if (!python && collector.active()) installSignalHandlers();
  // After start(): the plugin records through the C ABI, which takes the collector's lock.
  if (native_libtorch && collector.active()) {
    if (const std::string why = attachLibtorchPlugin(); !why.empty()) {
      collector.diagnostic("collector", "warning", "libtorch's requests and operators are not recorded: " + why);
    }
  }
}

__attribute__((constructor)) void loadCollector() {
  try {
    initialize();
  } catch (...) {
  }
}

}  // namespace
}  // namespace torchscope::collector

extern "C" {

__attribute__((visibility("default"))) int InitializeInjection(void) {
  try {
    torchscope::collector::initialize();
    return 1;
  } catch (...) {
    return 0;
  }
}

// os._exit() (multiprocessing and DataLoader workers end this way) skips atexit: close the store
// first. Calls from a vfork() child are recognised by their pid and do nothing.
__attribute__((visibility("default"))) void _exit(int status) {
  torchscope::collector::onExit(status);
  using ExitFunction = void (*)(int);
  static const auto real_exit = reinterpret_cast<ExitFunction>(dlsym(RTLD_NEXT, "_exit"));
  if (real_exit != nullptr) real_exit(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

}  // extern "C"
