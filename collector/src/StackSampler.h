// The stack sampler: a thread that wakes at a fixed rate and reads every Python thread's stack, as py-spy and Austin
// do but from inside the process, so that every job (eager or compiled, CPU or GPU) gets its host time by line without
// a code change. On CPython 3.11 it reads the interpreter's memory without the GIL (StackSamplerDirect.cpp,
// PythonMemory.h), and takes the GIL (the walk through the C API here) only for what it cannot read alone; on any
// other version it always takes the GIL, and sees a thread that computes in pure Python where it next lets it go. Each
// sample is credited with the wall time since that thread's previous sample (a long call that holds the GIL is credited
// to the line that made it once the sampler gets the GIL back) and with the thread's CPU time over the same interval.
// Samples are aggregated per step, thread and stack, and written as stack_samples rows at each step end and when the
// sampler stops (docs/FORMAT.md, *Sampled stacks*). Only samples taken while the capture window is open are kept;
// frames and stacks are interned in the store as they are first seen. Only Python frames are read: native code is
// summarised by the Python line that called it and the thread's CPU time beside its wall time.
//
// The sampler never touches the interpreter while it finalises: the bridge starts it once the interpreter runs and
// stops it from an atexit handler, before finalisation begins.
#pragma once

#include <sys/types.h>

#include <array>
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
#include "PythonMemory.h"
#include "TickBudget.h"
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

// How the sampler reads the stacks. kDirect: without the GIL (PythonMemory.h) where the interpreter's layout is known,
// with it for a tick that meets a code object or thread it does not know yet; kGil: always with the GIL (the only
// way on other versions); kCompare (for tests): every tick with the GIL, reading both ways and counting the threads
// whose stacks differ, the GIL walk's stacks kept.
enum class StackReader { kDirect, kGil, kCompare };
// TORCHSCOPE_SAMPLE_READER=direct (the default), gil or compare; `error` says why another value reads directly.
struct StackReaderChoice {
  StackReader reader = StackReader::kDirect;
  std::string error;
};
[[nodiscard]] StackReaderChoice stackReaderFromEnvironment();

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
  // Deeper stacks keep their innermost frames.
  static constexpr std::size_t kMaxStackDepth = 256;
  // A thread that threading does not list after this many ticks (one started with _thread) stays unnamed.
  static constexpr int kMaxThreadLookups = 100;

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
    CodeHeader header;  // read when interned, where the direct reader is used
    std::string line_table;
    bool read = false;  // header and line table
  };
  // A code object the direct reader met without holding it (a function that runs between two of its thread's
  // lets-go of the GIL is never seen by the GIL walk), named from its memory; told apart from a later code object at
  // the same address by its header.
  struct UnheldCode {
    CodeHeader header;
    std::string file;
    std::string function;
    std::string line_table;
  };
  // The key of an unheld code object in the frame tables: its index with the top bit set, which no address has.
  static constexpr std::uintptr_t kUnheldKey = std::uintptr_t{1} << 63;
  static constexpr std::size_t kMaxUnheldCodes = 1 << 16;
  // A frame read without the GIL.
  struct DirectFrame {
    std::uintptr_t address;
    std::uintptr_t code;  // a held code object's address, or an unheld one's key
    int offset;           // in bytes, as PyFrame_GetLasti
  };
  // One thread's sample before it is credited; `key`: its ident as a Python int, null when read without the GIL
  // (such a thread is already named).
  struct Walked {
    unsigned long ident;
    PyObject* key;
    std::int64_t stack_id;
    std::int64_t cpu_ns;
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
  // Each walked thread's credit into `credits`; names new threads when `py` is given (with the GIL).
  void creditThreads(const PythonApi* py, std::int64_t now_ns, const std::vector<Walked>& walked,
                     std::vector<Credit>& credits);
  void keepCredits(const std::vector<Credit>& credits);
  // Without the GIL (StackSamplerDirect.cpp): false when the tick must read with the GIL instead (a thread not named
  // yet, or a read that cannot be trusted), gil_reason_ saying why.
  bool tickWithoutGil();
  // raw_threads_ into direct_stacks_, new frames interned; false (gil_reason_ set) on a read that cannot be trusted.
  // Counts the frames of unheld code objects into unheld_frames_.
  bool resolveRawThreads();
  // With the GIL, crediting nothing: the GIL walk's interning of every thread's stack, so that the code objects of
  // long-lived frames are held (read by address) rather than read again at every tick.
  void holdCodesWithGil(const PythonApi& py);
  // The key of the unheld code object at `address` (UnheldCode), 0 when it does not read as one.
  std::uintptr_t unheldCodeAt(std::uintptr_t address);
  std::int64_t directStackOf(const std::vector<DirectFrame>& frames, std::vector<WalkedFrame>& previous);
  // The frame id of (code key, line), its names given.
  std::int64_t internFrame(std::uintptr_t key, std::int64_t line, const std::string& file, const std::string& function);
  // The stack of `frame_id` called from `parent` (-1: none), interned.
  std::int64_t stackIdOf(std::int64_t parent, std::int64_t frame_id);
  void chooseReader();
  // The info diagnostics at stop: the ticks, their CPU, and how far the budget spread them; how many the direct
  // reader read with the GIL, and why.
  [[nodiscard]] std::string budgetReport() const;
  [[nodiscard]] std::string readerReport() const;
  void internCode(const PythonApi& py, PyObject* code, CodeNames& names);
  // With the GIL, after a walk (kCompare): the direct reader's stacks for the same frames against `walked`.
  void compareReaders(const PythonApi& py, const std::vector<Walked>& walked);
  // The stack of `frame`'s thread; `previous`: that thread's previous walk, replaced by this one.
  std::int64_t stackOf(const PythonApi& py, PyObject* frame, std::vector<WalkedFrame>& previous);
  // The frame's id by its code object and instruction offset (-1: unknown): computing a line number scans the code's
  // line table, most of a tick's cost before this cache.
  std::int64_t frameIdAt(const PythonApi& py, PyObject* frame, PyObject* code, int offset);
  std::int64_t frameIdOf(const PythonApi& py, PyObject* code, std::int64_t line);
  // A thread not yet named: its native id and name from threading (`active`: threading._active or null), when listed.
  void describeThread(const PythonApi& py, ThreadClock& clock, PyObject* key, PyObject* active);
  void writeNewRecords();
  // Under mutex_: the credits up to `end_ns` go to `step` (those before `start_ns` to no step), each credited with no
  // time before the run of kept steps that `step` belongs to.
  void assign(std::int64_t step, std::int64_t start_ns, std::int64_t end_ns);
  void add(std::map<TotalsKey, Totals>& totals, std::int64_t step, const Credit& credit);
  void write(const std::map<TotalsKey, Totals>& totals);

  const pid_t pid_;
  const std::chrono::nanoseconds period_;
  const CaptureWindow& window_;
  TickBudget budget_;  // the sampler thread's own: what its ticks cost, and the interval that keeps them in budget
  StackReader reader_ = StackReader::kGil;
  const InterpreterLayout* layout_ = nullptr;  // null: read with the GIL
  std::uintptr_t interpreter_ = 0;             // the main interpreter's state

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
  std::vector<PyObject*> walk_;         // the frames of the stack being read, innermost first (owned references)
  std::vector<RawThread> raw_threads_;  // the direct reader's last read
  std::vector<std::vector<DirectFrame>> direct_stacks_;
  std::vector<UnheldCode> unheld_codes_;
  std::size_t unheld_frames_ = 0;  // in the last resolveRawThreads
  std::int64_t last_hold_ns_ = 0;  // the last holdCodesWithGil
  std::unordered_map<std::uintptr_t, std::vector<std::size_t>>
      unheld_at_;  // by address: indexes in unheld_codes_  // raw_threads_'s, innermost first; empty: no complete frame
  std::unordered_map<unsigned long, std::vector<WalkedFrame>> last_direct_walks_;  // by ident: frames by address
  // Why a tick of the direct reader read with the GIL instead: a thread not named yet, a list of threads that could
  // not be read through, a code object that did not read as one, a frame whose instruction lay outside its code.
  enum class GilReason { kNewThread, kThreadList, kCodeObject, kFramePosition, kCount };
  std::int64_t ticks_without_gil_ = 0;  // kDirect: ticks read without the GIL, and with it by reason
  std::array<std::int64_t, static_cast<std::size_t>(GilReason::kCount)> ticks_with_gil_{};
  GilReason gil_reason_ = GilReason::kNewThread;  // the last tickWithoutGil (or resolveRawThreads) that gave up
  std::int64_t compared_ = 0;  // kCompare: thread samples read both ways, and those whose stacks differed
  std::int64_t compare_differences_ = 0;
  PyThreadState* thread_state_ = nullptr;

  std::mutex mutex_;  // guards what follows; never held while the GIL is taken
  std::vector<Credit> pending_;
  std::map<TotalsKey, Totals> outside_steps_;
  // The start of the current run of kept steps, each starting where the last ended; the last kept step's end (-1:
  // the last step was not kept).
  std::int64_t kept_run_start_ns_ = -1;
  std::int64_t last_kept_end_ns_ = -1;
  bool stopped_ = false;

  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::atomic<bool> stopping_{false};
  bool stopped_holding_gil_ = false;  // under wake_mutex_
  bool finished_ = false;             // the thread left its loop
  std::thread thread_;
};

}  // namespace torchscope::collector
