// The per-process collector: owns this process's store, names it, and keeps the run's metadata.
// One instance per process (created on first use and never destroyed, so that exit handlers and
// late callbacks can still reach it). Every method is safe to call from any thread and never
// throws; records arriving when no store is open are ignored.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "HostMemory.h"
#include "RankIdentity.h"
#include "Window.h"
#include "torchscope/store/Records.h"
#include "torchscope/store/UserCode.h"
#include "torchscope/store/Writer.h"

namespace torchscope::collector {

class StackSampler;

// Counts shown in the exit summary.
struct Tally {
  std::atomic<std::int64_t> compiles{0};
  std::atomic<std::int64_t> graph_breaks{0};
  std::atomic<std::int64_t> recompiles{0};
  std::atomic<std::int64_t> steps{0};
  std::atomic<std::int64_t> syncs{0};
  std::atomic<std::int64_t> notes{0};  // diagnostics from the bridge
  [[nodiscard]] bool empty() const;
  void reset();
};

class Collector {
 public:
  static Collector& instance();

  // Opens this process's store (once per process). `python` says whether the bridge will run; `native_libtorch`
  // that a program without Python has libtorch loaded (the libtorch plugin records into the store).
  void start(bool python, bool native_libtorch = false);
  // Commits the rest, records how the process ends (`exit_code`: the exit status, 128+n for
  // signal n, -1 unknown) and closes the store; only the process that opened it does anything.
  void shutdown(int exit_code = -1);

  // fork(): the parent quiesces its writer; the child forgets it and opens a store of its own.
  void beforeFork();
  void afterForkInParent();
  void afterForkInChild();

  [[nodiscard]] bool active() const {
    return writer_.load(std::memory_order_acquire) != nullptr || open_after_fork_.load();
  }
  [[nodiscard]] std::string storePath() const;

  template <class T>
  bool add(T record) {
    store::Writer* writer = writer_.load(std::memory_order_acquire);
    if (writer == nullptr && open_after_fork_.load()) writer = openAfterFork();
    if (writer == nullptr) return false;
    writer->add(std::move(record));
    return true;
  }
  void flush();
  // Stops GPU tracing for a tool that needs CUPTI (torchscope_gpu_handover in collector.h); false when it was not on.
  bool handOverGpu(const std::string& reason);

  // Updates one field of the run's metadata (python_version, torch_version, ...).
  bool setRunField(const std::string& key, const std::string& value);
  void diagnostic(const std::string& source, const std::string& severity, const std::string& message);
  void bridgeStarted() { bridge_started_.store(true); }
  // Which files are the user's (sent by the bridge once torch is imported; empty before).
  void setCodeRoots(store::CodeRoots roots);
  [[nodiscard]] store::CodeRoots codeRoots() const;

  // One training step of the calling thread (torchscope_record_step): false when it is outside the capture window
  // (not stored) or the store is closed.
  bool recordStep(std::int64_t index, std::int64_t start_ns, std::int64_t end_ns, const char* source);
  // A stack sampler's tick: it reads the host RSS too once the host-memory sampler handed its ticks over.
  void tickHostMemory();
  // Host memory at the end of a step (memory_samples rows), when memory capture is on.
  void recordStepMemory(std::int64_t step, std::int64_t end_ns);

  // The stack sampler (StackSampler.h) of a Python process with a store unless TORCHSCOPE_SAMPLE_HZ=0: started by
  // the bridge once the interpreter runs (and again in a fork() child), stopped by it before the interpreter
  // finalises, and at shutdown at the latest.
  void startStackSampler();
  void stopStackSampler();
  // A step ended (`kept`: inside the capture window): its samples become its stack_samples rows.
  void sampleStepEnd(std::int64_t step, std::int64_t start_ns, std::int64_t end_ns, bool kept);

  Tally& tally() { return tally_; }
  // What is kept of the run besides compile events (docs/collector.md, *Capture window*).
  CaptureWindow& window() { return window_; }
  [[nodiscard]] bool windowOpen() const { return window_.isOpen(); }

 private:
  Collector() = default;
  void openStore();
  store::Writer* openAfterFork();
  void startGpu();
  void warnOfAnUnseenProfilerRange();
  void printSummary(const std::string& path, const std::string& loss) const;
  void closeAndRemove(store::Writer* writer);
  void startWindow(store::Writer& writer);
  static void onWindowChange(bool open);
  // The host-memory sampler hands its ticks to a stack sampler that wakes at least as often.
  void shareSideThreadTicks();

  mutable std::mutex mutex_;  // guards the lifecycle and run_
  std::atomic<store::Writer*> writer_{nullptr};
  std::atomic<pid_t> owner_pid_{-1};
  bool python_ = false;
  bool verbose_ = false;
  bool gpu_started_ = false;
  bool forked_ = false;  // this process is a fork() child of a traced process
  // A fork() child opens its store on its first record or at exit, so that a child that goes
  // straight on to exec() another program leaves no store behind.
  std::atomic<bool> open_after_fork_{false};
  std::atomic<bool> bridge_started_{false};
  std::string path_;
  store::RunInfo run_;
  RankIdentity identity_;
  // Its own lock: the GPU backend reads the roots from CUDA callbacks, which shutdown waits for under mutex_.
  mutable std::mutex roots_mutex_;
  store::CodeRoots code_roots_;
  Tally tally_;
  // Started with the store of a Python process (TORCHSCOPE_MEMORY=0 turns it off); stopped, never
  // deleted, at shutdown, so that a late step end sees a stopped sampler rather than freed memory.
  std::atomic<HostMemorySampler*> host_memory_{nullptr};
  // The same for the stack sampler, which belongs to the process that started it.
  std::atomic<StackSampler*> stack_sampler_{nullptr};
  std::mutex stack_sampler_mutex_;  // serialises its start and stop
  CaptureWindow window_;
};

// The path a process writes to: the requested path for the job's first process, and
// `<stem>[.rank<r>].<pid>.db` next to it for every other process and for every rank (`rank` >= 0:
// the launcher's rank, else its local rank; -1 for none).
[[nodiscard]] std::string storePathFor(const std::string& requested, pid_t pid, bool first_process,
                                       std::int64_t rank);

}  // namespace torchscope::collector
