// The stack sampler's reader without the GIL (StackSampler.h, PythonMemory.h): a tick reads every thread's frames
// from the interpreter's memory while the job's threads run on, and takes the GIL only for what it cannot know alone.
#include <time.h>

#include <atomic>

#include "Collector.h"
#include "StackSampler.h"
#include "torchscope/base/Clock.h"

namespace torchscope::collector {

namespace {

constexpr std::size_t kMaxAdoptedCodes = 4096;  // waiting for the sampler's next take of the GIL
constexpr std::int64_t kAdoptionPatienceNs = 1'000'000'000;

// Code objects of the job's main thread, each with a reference taken for the sampler: guarded by the GIL (the main
// thread adds them in a pending call, the sampler takes them with the GIL).
std::vector<PyObject*>& adoptedCodes() {
  static auto* codes = new std::vector<PyObject*>;  // never freed: a pending call may come after the sampler stops
  return *codes;
}
// When the pending call was asked for, 0 when none waits. One asked before a fork() and lost in the child is asked
// again after kAdoptionPatienceNs.
std::atomic<std::int64_t> adoption_asked_ns{0};

// Run by the job's main thread, with the GIL, at its next check for pending calls (within a pure-Python loop too):
// every frame on its stack holds its code object, so each can be held for the sampler. The GIL walk alone never sees
// a function that runs between two of the thread's lets-go of the GIL, and without its code object held the direct
// reader could not name it.
int adoptMainThreadCodes(void*) {
  try {
    const PythonApi& py = pythonApi();
    const InterpreterLayout* layout = layoutOfRunningInterpreter(py);
    PyThreadState* state = py.thread_state_get != nullptr ? py.thread_state_get() : nullptr;
    if (layout != nullptr && state != nullptr) {
      static std::vector<RawFrame> frames;  // guarded by the GIL
      readFramesOf(*layout, reinterpret_cast<std::uintptr_t>(state), frames);
      std::vector<PyObject*>& adopted = adoptedCodes();
      for (const RawFrame& frame : frames) {
        if (frame.code == 0 || adopted.size() >= kMaxAdoptedCodes) continue;
        PyObject* code = reinterpret_cast<PyObject*>(frame.code);
        py.incref(code);
        adopted.push_back(code);
      }
    }
  } catch (...) {
    // Out of memory: the codes stay unknown, the sampler reads those ticks with the GIL.
  }
  adoption_asked_ns = 0;
  return 0;
}

void askForMainThreadCodes(const PythonApi& py) {
  const std::int64_t now = base::monotonicNow();
  std::int64_t asked = adoption_asked_ns.load();
  if (asked != 0 && now - asked < kAdoptionPatienceNs) return;
  if (!adoption_asked_ns.compare_exchange_strong(asked, now)) return;
  if (py.add_pending_call(adoptMainThreadCodes, nullptr) != 0) adoption_asked_ns = 0;
}

// CPU time of a thread of this process by its kernel id, -1 when it cannot be read: Linux's per-thread CPU clock
// (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)), which fails for a thread that ended rather than read a freed pthread
// descriptor, and for a thread of another process.
std::int64_t threadCpuNanosOfTid(std::int64_t tid) {
  if (tid <= 0) return -1;
  const auto clock = static_cast<clockid_t>((~static_cast<std::uint32_t>(tid) << 3) | 6U);
  timespec now{};
  if (clock_gettime(clock, &now) != 0) return -1;
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

}  // namespace

void StackSampler::chooseReader() {
  const StackReaderChoice choice = stackReaderFromEnvironment();
  Collector& collector = Collector::instance();
  if (!choice.error.empty()) collector.diagnostic("collector", "warning", choice.error);
  const PythonApi& py = pythonApi();
  const InterpreterLayout* layout =
      py.canSampleWithoutGil() && py.main_interpreter != nullptr ? layoutOfRunningInterpreter(py) : nullptr;
  reader_ = layout != nullptr ? choice.reader : StackReader::kGil;
  if (reader_ != StackReader::kGil) {
    layout_ = layout;
    interpreter_ = reinterpret_cast<std::uintptr_t>(py.main_interpreter());
  }
  std::string message;
  if (reader_ == StackReader::kDirect) {
    message = "stack sampler: stacks read without the GIL";
  } else if (reader_ == StackReader::kCompare) {
    message = "stack sampler: stacks read with the GIL and compared with the reader without it";
  } else if (choice.reader == StackReader::kGil) {
    message = "stack sampler: stacks read with the GIL (TORCHSCOPE_SAMPLE_READER=gil)";
  } else {
    const unsigned long version = py.version != nullptr ? *py.version : 0;
    const std::string name = version != 0 ? std::to_string((version >> 24) & 0xff) + "." +
                                                std::to_string((version >> 16) & 0xff)
                                          : "before 3.11";
    message = "stack sampler: stacks read with the GIL (no reader without it for Python " + name +
              "): a thread that computes in pure Python is seen where it next lets the GIL go";
  }
  collector.diagnostic("collector", "info", message);
}

bool StackSampler::tickWithoutGil(const PythonApi& py) {
  const std::int64_t now_ns = base::monotonicNow();
  if (!readThreads(*layout_, interpreter_, raw_threads_)) return false;
  std::vector<std::int64_t> cpu_ns(raw_threads_.size());
  for (std::size_t i = 0; i < raw_threads_.size(); ++i) cpu_ns[i] = threadCpuNanosOfTid(raw_threads_[i].native_id);
  std::vector<std::pair<PyObject*, int>> new_lines;
  bool main_thread_unknown = false;
  if (!resolveRawThreads(new_lines, main_thread_unknown)) {
    if (main_thread_unknown) askForMainThreadCodes(py);
    return false;
  }
  for (std::size_t i = 0; i < raw_threads_.size(); ++i) {
    if (direct_stacks_[i].empty()) continue;
    // A thread not named yet is named with the GIL, as the GIL walk does.
    const auto clock = clocks_.find(raw_threads_[i].ident);
    if (clock == clocks_.end() || (clock->second.tid < 0 && clock->second.lookups < kMaxThreadLookups)) return false;
  }
  if (!new_lines.empty()) {
    py.restore_thread(thread_state_);
    struct LetGilGo {
      const PythonApi& py;
      ~LetGilGo() { py.save_thread(); }
    } let_go{py};
    ++ticks_for_lines_;
    if (stopping_) return true;
    takeAdoptedCodes(py);
    internLines(py, new_lines);
  }
  std::vector<Walked> walked;
  for (std::size_t i = 0; i < raw_threads_.size(); ++i) {
    if (direct_stacks_[i].empty()) continue;
    const unsigned long ident = raw_threads_[i].ident;
    walked.push_back({ident, nullptr, directStackOf(direct_stacks_[i], last_direct_walks_[ident]), cpu_ns[i]});
  }
  std::vector<Credit> credits;
  creditThreads(nullptr, now_ns, walked, credits);
  writeNewRecords();
  keepCredits(credits);
  return true;
}

bool StackSampler::resolveRawThreads(std::vector<std::pair<PyObject*, int>>& new_lines, bool& main_thread_unknown) {
  direct_stacks_.resize(raw_threads_.size());
  bool all_known = true;
  for (std::size_t i = 0; i < raw_threads_.size(); ++i) {
    std::vector<DirectFrame>& stack = direct_stacks_[i];
    stack.clear();
    for (const RawFrame& raw : raw_threads_[i].frames) {
      if (stack.size() == kMaxStackDepth) break;
      PyObject* code = reinterpret_cast<PyObject*>(raw.code);
      const auto names = code_names_.find(code);
      CodeShape shape;
      const bool held = names != code_names_.end() && names->second.shaped;
      // A code object not held is only read (its shape), never trusted, to tell whether its frame has started.
      if (held) {
        shape = names->second.shape;
      } else if (!readCodeShape(*layout_, raw.code, shape)) {
        return false;
      }
      const auto distance = static_cast<std::int64_t>(raw.prev_instr - shape.first_instruction);
      const std::int64_t unit = distance / 2;  // _Py_CODEUNIT: two bytes
      // Not started yet (_PyFrame_IsIncomplete): sys._current_frames and PyFrame_GetBack pass over it too.
      if (!raw.owned_by_generator && unit < shape.first_traceable) continue;
      if (!held) {
        all_known = false;
        main_thread_unknown = main_thread_unknown || i + 1 == raw_threads_.size();  // the oldest thread state
        break;
      }
      if (distance % 2 != 0 || unit < 0 || unit >= shape.code_units) return false;  // a torn read
      const int offset = static_cast<int>(unit * 2);
      stack.push_back({raw.address, code, offset});
      if (frame_ids_at_offset_.count({raw.code, offset}) == 0) new_lines.emplace_back(code, offset);
    }
  }
  return all_known;
}

void StackSampler::internLines(const PythonApi& py, const std::vector<std::pair<PyObject*, int>>& new_lines) {
  // PyCode_Addr2Line is called with the GIL: CPython 3.11's reads a line array that tracing may be filling.
  for (const auto& [code, offset] : new_lines) {
    const auto [node, added] = frame_ids_at_offset_.try_emplace({reinterpret_cast<std::uintptr_t>(code), offset}, 0);
    if (added) node->second = frameIdOf(py, code, py.code_line(code, offset));
  }
}

std::int64_t StackSampler::directStackOf(const std::vector<DirectFrame>& frames, std::vector<WalkedFrame>& previous) {
  this_walk_.clear();
  std::int64_t parent = -1;
  bool as_before = true;  // as in stackOf, frames compared by the address of their _PyInterpreterFrame
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    const std::size_t depth = this_walk_.size();
    PyObject* address = reinterpret_cast<PyObject*>(it->address);
    as_before = as_before && depth < previous.size() && previous[depth].frame == address &&
                previous[depth].code == it->code && previous[depth].offset == it->offset;
    const std::int64_t stack_id =
        as_before
            ? previous[depth].stack_id
            : stackIdOf(parent, frame_ids_at_offset_.at({reinterpret_cast<std::uintptr_t>(it->code), it->offset}));
    this_walk_.push_back({address, it->code, it->offset, stack_id});
    parent = stack_id;
  }
  previous.swap(this_walk_);
  return parent;
}

void StackSampler::takeAdoptedCodes(const PythonApi& py) {
  std::vector<PyObject*>& adopted = adoptedCodes();
  for (PyObject* code : adopted) {
    const auto [names, added] = code_names_.try_emplace(code);
    if (added) {
      internCode(py, code, names->second);  // the reference taken by the main thread is the one code_names_ holds
    } else {
      py.decref(code);
    }
  }
  adopted.clear();
}

void StackSampler::compareReaders(const PythonApi& py, const std::vector<Walked>& walked) {
  std::unordered_map<unsigned long, std::int64_t> walked_stacks;
  for (const Walked& thread : walked) walked_stacks[thread.ident] = thread.stack_id;
  std::vector<std::pair<PyObject*, int>> new_lines;
  bool main_thread_unknown = false;
  if (!readThreads(*layout_, interpreter_, raw_threads_) || !resolveRawThreads(new_lines, main_thread_unknown)) {
    compared_ += static_cast<std::int64_t>(walked.size());
    compare_differences_ += static_cast<std::int64_t>(walked.size());
    return;
  }
  internLines(py, new_lines);
  std::size_t read_directly = 0;
  for (std::size_t i = 0; i < raw_threads_.size(); ++i) {
    if (direct_stacks_[i].empty()) continue;
    ++read_directly;
    const unsigned long ident = raw_threads_[i].ident;
    const std::int64_t stack_id = directStackOf(direct_stacks_[i], last_direct_walks_[ident]);
    const auto by_gil = walked_stacks.find(ident);
    ++compared_;
    if (by_gil == walked_stacks.end() || by_gil->second != stack_id) ++compare_differences_;
  }
  // A thread the GIL walk saw that the direct reader did not.
  if (walked.size() > read_directly) compare_differences_ += static_cast<std::int64_t>(walked.size() - read_directly);
}

}  // namespace torchscope::collector
