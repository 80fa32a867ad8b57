// The stack sampler: a thread that wakes at a fixed rate, takes the GIL and reads every Python thread's stack, as
// py-spy and Austin do but from inside the process, so that every job (eager or compiled, CPU or GPU) gets its host
// time by line without a code change. Each sample is credited with the wall time since that thread's previous sample
// (a long call that holds the GIL is credited to the line that made it once the sampler gets the GIL back) and with
// the thread's CPU time over the same interval. Samples are aggregated per step, thread and stack, and written as
// stack_samples rows at each step end and when the sampler stops (docs/FORMAT.md, *Sampled stacks*). Only samples
// taken while the capture window is open are kept; frames and stacks are interned in the store as they are first
// seen. Only Python frames are read: native code is summarised by the Python line that called it and the thread's
// CPU time beside its wall time.
//
// The sampler never touches the interpreter while it finalises: the bridge starts it once the interpreter runs and
// stops it from an atexit handler, before finalisation begins.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "PythonApi.h"
#include "Window.h"
#include "torchscope/store/Records.h"

namespace torchscope::collector {

inline constexpr int kMaxSampleHz = 1000;

// TORCHSCOPE_SAMPLE_HZ: samples per second (100 when unset), 0 for none, at most kMaxSampleHz. A value that is not
// a whole number falls back to 100 Hz and one above the maximum to the maximum, with `error` saying so.
struct SampleRate {
  int hz = 0;
  std::string error;
};
[[nodiscard]] SampleRate sampleRateFromEnvironment();

class StackSampler {
 public:
  // Starts the thread; it samples `hz` times a second while `window` is open.
  StackSampler(pid_t pid, int hz, const CaptureWindow& window);
  ~StackSampler();
  StackSampler(const StackSampler&) = delete;
  StackSampler& operator=(const StackSampler&) = delete;

  [[nodiscard]] std::chrono::nanoseconds period() const { return period_; }
  // A step ended: the samples taken in [start_ns, end_ns] become its rows (`kept`: the step is stored; otherwise they
  // count as outside every step).
  void stepEnded(std::int64_t index, std::int64_t start_ns, std::int64_t end_ns, bool kept);
  // Stops the thread and writes what is left. Waits at most `patience` for the thread: one that waits for the GIL
  // held by the caller (os._exit from Python) is left behind, since the process ends at once. Safe to call twice.
  void stop(std::chrono::milliseconds patience);

 private:
  // One sample of one thread, waiting for the step it falls in.
  struct Credit {
    std::int64_t ts_ns = 0;
    std::int64_t tid = 0;
    std::int64_t stack_id = 0;
    std::int64_t wall_ns = 0;
    std::int64_t cpu_ns = -1;
  };
  struct Totals {
    std::int64_t samples = 0;
    std::int64_t wall_ns = 0;
    std::int64_t cpu_ns = 0;
    bool cpu_known = true;
  };
  using TotalsKey = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // step, tid, stack
  struct ThreadClock {
    std::int64_t tid = -1;
    std::int64_t last_ns = -1;
    std::int64_t last_cpu_ns = -1;
    bool seen = false;  // sampled in the current tick
    int lookups = 0;    // ticks that looked for its Thread object (for its native id and name)
  };
  // One frame of a thread's previous walk, outermost first: a frame that is still there, at the same instruction, under
  // the same callers, has the same stack, found without a lookup (most of a sample's cost was hashing every frame).
  struct WalkedFrame {
    PyObject* frame = nullptr;  // compared by address only, never dereferenced
    PyObject* code = nullptr;   // held by code_names_, so its address is never reused
    int offset = -1;
    std::int64_t stack_id = 0;  // the stack from the outermost frame to this one
  };
  struct CodeNames {
    std::string file;
    std::string function;
  };
  // Both halves mixed (splitmix64): small consecutive ids would collide under a plain sum.
  struct PairHash {
    std::size_t operator()(const std::pair<std::uintptr_t, std::int64_t>& key) const {
      std::uint64_t x =
          static_cast<std::uint64_t>(key.first) * 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(key.second);
      x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
      x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
      return static_cast<std::size_t>(x ^ (x >> 31));
    }
  };

  void run();
  void tick();
  // Frees the thread's own Python thread state while the interpreter runs. Not when stop() came from a thread that
  // holds the GIL (os._exit): the process ends, the thread state with it.
  void releaseThreadState();
  // With the GIL: every thread's sample into `credits`, new frames, stacks and threads into the pending records.
  void sampleThreads(const PythonApi& py, std::int64_t now_ns, std::vector<Credit>& credits);
  // The stack of `frame`'s thread; `previous`: that thread's previous walk, replaced by this one.
  std::int64_t stackOf(const PythonApi& py, PyObject* frame, std::vector<WalkedFrame>& previous);
  // The frame's id by its code object and instruction offset (-1: unknown): computing a line number scans the code's
  // line table, most of a tick's cost before this cache.
  std::int64_t frameIdAt(const PythonApi& py, PyObject* frame, PyObject* code, int offset);
  std::int64_t frameIdOf(const PythonApi& py, PyObject* code, std::int64_t line);
  // A thread not yet named: its native id and name from threading (`active`: threading._active or null), when listed.
  void describeThread(const PythonApi& py, ThreadClock& clock, PyObject* key, PyObject* active);
  void writeNewRecords();
  // Under mutex_: the credits up to `end_ns` go to `step` (those before `start_ns` to no step).
  void assign(std::int64_t step, std::int64_t start_ns, std::int64_t end_ns);
  void add(std::map<TotalsKey, Totals>& totals, std::int64_t step, const Credit& credit);
  void write(const std::map<TotalsKey, Totals>& totals);

  const pid_t pid_;
  const std::chrono::nanoseconds period_;
  const CaptureWindow& window_;

  // The sampler thread's own: its Python thread state (made at the first tick, kept until the thread ends: one made and
  // freed per take of the GIL was 3-4 % of a tick), the interning of frames and stacks, and each thread's clocks.
  std::unordered_map<PyObject*, CodeNames> code_names_;  // code objects held, so that an address is never reused
  std::unordered_map<std::pair<std::uintptr_t, std::int64_t>, std::int64_t, PairHash> frame_ids_;  // (code, line)
  std::unordered_map<std::pair<std::uintptr_t, std::int64_t>, std::int64_t, PairHash> frame_ids_at_offset_;
  std::unordered_map<std::pair<std::uintptr_t, std::int64_t>, std::int64_t, PairHash> stack_ids_;  // (parent, frame)
  std::unordered_map<unsigned long, ThreadClock> clocks_;                   // by Python thread ident (pthread_t)
  std::unordered_map<unsigned long, std::vector<WalkedFrame>> last_walks_;  // by Python thread ident
  std::vector<WalkedFrame> this_walk_;
  std::vector<store::StackFrame> new_frames_;
  std::vector<store::Stack> new_stacks_;
  std::vector<store::Thread> new_threads_;
  std::vector<PyObject*> walk_;  // the frames of the stack being read, innermost first (owned references)
  PyThreadState* thread_state_ = nullptr;

  std::mutex mutex_;  // guards what follows; never held while the GIL is taken
  std::vector<Credit> pending_;
  std::map<TotalsKey, Totals> outside_steps_;
  bool stopped_ = false;

  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::atomic<bool> stopping_{false};
  bool stopped_holding_gil_ = false;  // under wake_mutex_
  bool finished_ = false;             // the thread left its loop
  std::thread thread_;
};

}  // namespace torchscope::collector
