#include "StackSampler.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "Collector.h"
#include "Environment.h"
#include "torchscope/base/Clock.h"

namespace torchscope::collector {

namespace {

// visit(ident, key, frame) for each entry of sys._current_frames() (`frames`), skipping the malformed ones.
template <class Visit>
void forEachThreadFrame(const PythonApi& py, PyObject* frames, Visit&& visit) {
  long position = 0;
  PyObject* key = nullptr;
  PyObject* frame = nullptr;
  while (py.dict_next(frames, &position, &key, &frame) != 0) {
    const unsigned long ident = py.as_unsigned_long(key);
    if (ident == static_cast<unsigned long>(-1) || frame == nullptr) {
      py.clear_error();
      continue;
    }
    visit(ident, key, frame);
  }
}

// On by default (TORCHSCOPE_SAMPLE_HZ=0 turns it off): its cost and its stress record are in docs/performance.md,
// *Stack sampler* (the SIGSEGV once seen in its walk under torch.compile, a Python property run between walks that
// handed the GIL over, is fixed in sampleThreads).
constexpr int kDefaultSampleHz = 100;
static_assert(settings::kSampleHz.default_value == "100" && settings::kSampleHz.maximum == kMaxSampleHz);
// Samples waiting for their step's end; beyond this (a step of minutes, or a job without steps) the oldest half
// counts as outside every step, so that a day-long job's memory stays bounded.
constexpr std::size_t kMaxPendingCredits = 1 << 16;

// CPU time of a thread of this process by its pthread_t, -1 when it cannot be read.
std::int64_t threadCpuNanos(unsigned long ident) {
  clockid_t clock;
  if (pthread_getcpuclockid(static_cast<pthread_t>(ident), &clock) != 0) return -1;
  timespec now{};
  if (clock_gettime(clock, &now) != 0) return -1;
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// TORCHSCOPE_SAMPLE_BUDGET, its warning stored.
double budgetPercent() {
  const SampleBudget budget = sampleBudgetFromEnvironment();
  if (!budget.error.empty()) Collector::instance().diagnostic("collector", "warning", budget.error);
  return budget.percent;
}

// threading._active ({ident: Thread}, a new reference), null when the job has not imported threading: looked up in
// sys.modules, never imported (PyImport_AddModule would leave an empty module in its place).
PyObject* activeThreadsOf(const PythonApi& py) {
  PyObject* modules = py.sys_object("modules");
  PyObject* threading = modules != nullptr ? py.dict_get_string(modules, "threading") : nullptr;
  PyObject* active = threading != nullptr ? py.get_attr(threading, "_active") : nullptr;
  if (active == nullptr) py.clear_error();
  return active;
}

// Keeps the garbage collector off while it lives, or until resume(), when it was on.
class GarbageCollectionPause {
 public:
  explicit GarbageCollectionPause(const PythonApi& py)
      : py_(py), was_on_(py.gc_disable != nullptr && py.gc_enable != nullptr && py.gc_disable() == 1) {}
  ~GarbageCollectionPause() { resume(); }
  GarbageCollectionPause(const GarbageCollectionPause&) = delete;
  GarbageCollectionPause& operator=(const GarbageCollectionPause&) = delete;
  void resume() {
    if (was_on_) py_.gc_enable();
    was_on_ = false;
  }

 private:
  const PythonApi& py_;
  bool was_on_;
};

}  // namespace

SampleRate sampleRateFromEnvironment() {
  const std::string value = envString(std::string(settings::kSampleHz.name).c_str());
  if (value.empty()) return {kDefaultSampleHz, ""};
  char* end = nullptr;
  const long parsed = std::strtol(value.c_str(), &end, 10);
  if (end == value.c_str() || *end != '\0' || parsed < 0) {
    return {kDefaultSampleHz, std::string(settings::kSampleHz.name) + "=" + value +
                                  " is not a whole number from 0 to " + std::to_string(kMaxSampleHz) + ": sampled at " +
                                  std::to_string(kDefaultSampleHz) + " Hz"};
  }
  if (parsed > kMaxSampleHz) {
    return {kMaxSampleHz, std::string(settings::kSampleHz.name) + "=" + value + " is above " +
                              std::to_string(kMaxSampleHz) + ": sampled at " + std::to_string(kMaxSampleHz) + " Hz"};
  }
  return {static_cast<int>(parsed), ""};
}

StackReaderChoice stackReaderFromEnvironment() {
  const std::string value = envString(std::string(settings::kSampleReader.name).c_str());
  if (value.empty() || value == "direct") return {StackReader::kDirect, ""};
  if (value == "gil") return {StackReader::kGil, ""};
  if (value == "compare") return {StackReader::kCompare, ""};
  return {StackReader::kDirect,
          std::string(settings::kSampleReader.name) + "=" + value + " is not direct, gil or compare: read directly"};
}

StackSampler::StackSampler(pid_t pid, int hz, const CaptureWindow& window)
    : pid_(pid),
      period_(std::chrono::nanoseconds(1'000'000'000 / std::max(hz, 1))),
      window_(window),
      budget_(period_, budgetPercent()) {
  chooseReader();
  // The thread takes none of the job's signals: a handler run on it could wait for what this thread holds.
  sigset_t all_signals, previous;
  sigfillset(&all_signals);
  pthread_sigmask(SIG_BLOCK, &all_signals, &previous);
  thread_ = std::thread([this] { run(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

StackSampler::~StackSampler() { stop(std::chrono::milliseconds(1000)); }

void StackSampler::run() {
  pthread_setname_np(pthread_self(), "torchscope-smp");
  // Each interval is drawn from half to one and a half of the mean: at a fixed period, a job whose steps last a
  // multiple of it would be seen at the same points of every step (aliasing). The mean is the asked period, or longer
  // while the ticks cost more than the budget (TickBudget.h).
  std::minstd_rand jitter(static_cast<std::uint_fast32_t>(base::monotonicNow()));
  const auto interval = [&] {
    const std::int64_t mean_ns = budget_.meanInterval().count();
    return std::chrono::nanoseconds(std::uniform_int_distribution<std::int64_t>(mean_ns / 2, mean_ns * 3 / 2)(jitter));
  };
  // The first tick after the window opens falls anywhere in the first interval, as it would without the wait.
  const auto phase = [&] {
    return std::chrono::nanoseconds(
        std::uniform_int_distribution<std::int64_t>(0, budget_.meanInterval().count())(jitter));
  };
  auto next = std::chrono::steady_clock::now() + interval();
  std::int64_t cycle_start_cpu_ns = base::clockNanos(CLOCK_THREAD_CPUTIME_ID);
  std::int64_t cycle_start_ns = base::monotonicNow();
  std::unique_lock lock(wake_mutex_);
  while (!stopping_) {
    if (!window_.isOpen()) {
      // No ticks while the window is closed (each is a thread wake-up): the time it stays closed is credited to
      // nothing. Not under wake_mutex_: stop() takes it.
      clocks_.clear();
      lock.unlock();
      window_.waitWhileClosed(stopping_);
      lock.lock();
      next = std::chrono::steady_clock::now() + phase();
      // The closed window's time earns nothing: the share is of the time sampled, where the job is measured.
      cycle_start_cpu_ns = base::clockNanos(CLOCK_THREAD_CPUTIME_ID);
      cycle_start_ns = base::monotonicNow();
      continue;
    }
    if (wake_.wait_until(lock, next, [&] { return stopping_.load(); })) break;
    lock.unlock();
    try {
      tick();
    } catch (...) {
      // Out of memory while interning: this tick's samples are lost, the job goes on.
    }
    // The cycle's CPU: this tick, the wake-up before it and the previous wait's return; and its wall time.
    const std::int64_t cpu_ns = base::clockNanos(CLOCK_THREAD_CPUTIME_ID);
    const std::int64_t now_ns = base::monotonicNow();
    budget_.addCycle(cpu_ns - cycle_start_cpu_ns, now_ns - cycle_start_ns);
    cycle_start_cpu_ns = cpu_ns;
    cycle_start_ns = now_ns;
    lock.lock();
    // A tick that waited long for the GIL skips the ticks it missed rather than running them back to back.
    next = std::max(next + interval(), std::chrono::steady_clock::now());
  }
  // Not under wake_mutex_: stop() must be able to give up on a thread that waits for the GIL.
  const bool stopper_holds_gil = stopped_holding_gil_;
  lock.unlock();
  if (!stopper_holds_gil) releaseThreadState();
  lock.lock();
  finished_ = true;
  wake_.notify_all();
}

void StackSampler::releaseThreadState() {
  // An interpreter that finalises frees it with the other threads' (and must not be waited for).
  if (thread_state_ == nullptr) return;
  const PythonApi& py = pythonApi();
  if (py.is_initialized() == 0 || py.is_finalizing() != 0) return;
  py.restore_thread(thread_state_);
  py.thread_state_clear(thread_state_);
  py.thread_state_delete_current();
  thread_state_ = nullptr;
}

void StackSampler::tick() {
  if (!window_.isOpen()) {
    // The time the window stays closed is credited to nothing.
    clocks_.clear();
    return;
  }
  Collector::instance().tickHostMemory();
  const PythonApi& py = pythonApi();
  if (!py.canSampleThreads() || py.is_initialized() == 0 || py.is_finalizing() != 0) return;
  if (thread_state_ == nullptr) thread_state_ = py.thread_state_new(py.main_interpreter());
  if (thread_state_ == nullptr) return;
  if (reader_ == StackReader::kDirect) {
    if (tickWithoutGil()) {
      ++ticks_without_gil_;
      return;
    }
    ++ticks_with_gil_[static_cast<std::size_t>(gil_reason_)];
  }
  std::vector<Credit> credits;
  {
    py.restore_thread(thread_state_);
    // Let go even when interning runs out of memory: the job's threads wait for the GIL.
    struct LetGilGo {
      const PythonApi& py;
      ~LetGilGo() { py.save_thread(); }
    } let_go{py};
    // stop() may have come while this thread waited for the GIL.
    if (!stopping_) sampleThreads(py, base::monotonicNow(), credits);
  }
  writeNewRecords();
  keepCredits(credits);
}

void StackSampler::keepCredits(const std::vector<Credit>& credits) {
  if (credits.empty()) return;
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  pending_.insert(pending_.end(), credits.begin(), credits.end());
  if (pending_.size() > kMaxPendingCredits) {
    const auto half = pending_.begin() + static_cast<std::ptrdiff_t>(pending_.size() / 2);
    for (auto it = pending_.begin(); it != half; ++it) add(outside_steps_, -1, *it);
    pending_.erase(pending_.begin(), half);
  }
}

void StackSampler::sampleThreads(const PythonApi& py, std::int64_t now_ns, std::vector<Credit>& credits) {
  // No garbage collection while the stacks are read: the frame objects they make (sys._current_frames,
  // PyFrame_GetBack) can start one on this thread (Python 3.11 collects inside the allocation), whose finalizers
  // run Python code, which can hand the GIL to the job's threads mid-walk. Nothing of the job runs before it is
  // enabled again, so the job never sees it off.
  GarbageCollectionPause no_collection(py);
  PyObject* frames = currentFramesOfAllThreads(py);
  if (frames == nullptr) return;
  // Every stack is walked, and every thread's CPU clock read, before any Python code runs here (a Thread's `name` is
  // a property): running it can hand the GIL to the job's threads, which then pop frames this walk is on, some of
  // them Dynamo's own frames that it frees (a SIGSEGV in PyFrame_GetBack under torch.compile, caught under gdb), or
  // end, and the CPU clock of an ended thread is read through its freed descriptor (pthread_getcpuclockid). A thread
  // listed with a frame cannot end while this thread holds the GIL.
  std::vector<Walked> walked;
  forEachThreadFrame(py, frames, [&](unsigned long ident, PyObject* key, PyObject* frame) {
    walked.push_back({ident, key, stackOf(py, frame, last_walks_[ident]), threadCpuNanos(ident)});
  });
  if (reader_ == StackReader::kCompare) compareReaders(py, walked);
  no_collection.resume();
  creditThreads(&py, now_ns, walked, credits);
  py.decref(frames);
}

void StackSampler::creditThreads(const PythonApi* py, std::int64_t now_ns, const std::vector<Walked>& walked,
                                 std::vector<Credit>& credits) {
  for (auto& [ident, clock] : clocks_) clock.seen = false;
  PyObject* active = nullptr;  // threading._active, looked up at the tick's first new thread only
  bool active_looked_up = false;
  for (const Walked& thread : walked) {
    ThreadClock& clock = clocks_[thread.ident];
    // A thread runs Python before threading lists it (Thread._bootstrap_inner): looked for again at later ticks.
    if (py != nullptr && thread.key != nullptr && clock.tid < 0 && clock.lookups < kMaxThreadLookups) {
      if (!active_looked_up) active = activeThreadsOf(*py);
      active_looked_up = true;
      ++clock.lookups;
      describeThread(*py, clock, thread.key, active);
    }
    clock.seen = true;
    Credit credit;
    credit.ts_ns = now_ns;
    credit.tid = clock.tid;
    credit.stack_id = thread.stack_id;
    // A thread's first sample stands for one period.
    credit.wall_ns = clock.last_ns >= 0 ? now_ns - clock.last_ns : period_.count();
    credit.cpu_ns = thread.cpu_ns < 0 ? -1 : clock.last_cpu_ns >= 0 ? thread.cpu_ns - clock.last_cpu_ns : 0;
    clock.last_ns = now_ns;
    clock.last_cpu_ns = thread.cpu_ns;
    if (credit.stack_id > 0) credits.push_back(credit);
  }
  // A thread that ended; its ident may come back for a new thread.
  std::erase_if(clocks_, [](const auto& entry) { return !entry.second.seen; });
  std::erase_if(last_walks_, [&](const auto& entry) { return clocks_.count(entry.first) == 0; });
  std::erase_if(last_direct_walks_, [&](const auto& entry) { return clocks_.count(entry.first) == 0; });
  if (active != nullptr) py->decref(active);
}

void StackSampler::holdCodesWithGil(const PythonApi& py) {
  py.restore_thread(thread_state_);
  struct LetGilGo {
    const PythonApi& py;
    ~LetGilGo() { py.save_thread(); }
  } let_go{py};
  if (stopping_) return;
  // As in sampleThreads: no collection while frame objects are made, no Python code run between the walks.
  GarbageCollectionPause no_collection(py);
  PyObject* frames = currentFramesOfAllThreads(py);
  if (frames == nullptr) return;
  forEachThreadFrame(py, frames, [&](unsigned long ident, PyObject* /*key*/, PyObject* frame) {
    (void)stackOf(py, frame, last_walks_[ident]);
  });
  py.decref(frames);
}

void StackSampler::describeThread(const PythonApi& py, ThreadClock& clock, PyObject* key, PyObject* active) {
  store::Thread thread{pid_, -1, ""};
  // Both dicts are keyed by the thread's ident as an int. Held: `name` runs Python code, during which the thread
  // may end and leave the dict.
  PyObject* object = active != nullptr ? py.dict_get(active, key) : nullptr;
  if (object != nullptr) {
    py.incref(object);
    if (PyObject* native = py.get_attr(object, "native_id")) {
      thread.tid = py.as_long_long(native);
      py.decref(native);
    }
    py.clear_error();
    thread.name = textAttribute(py, object, "name");
    py.decref(object);
  }
  if (thread.tid <= 0) return;
  clock.tid = thread.tid;
  new_threads_.push_back(std::move(thread));
}

std::int64_t StackSampler::stackOf(const PythonApi& py, PyObject* innermost, std::vector<WalkedFrame>& previous) {
  walk_.clear();
  py.incref(innermost);
  for (PyObject* frame = innermost; frame != nullptr && walk_.size() < kMaxStackDepth; frame = py.frame_back(frame)) {
    walk_.push_back(frame);
  }
  this_walk_.clear();
  std::int64_t parent = -1;
  bool as_before = true;  // every frame so far is the previous walk's, at the same instruction
  for (auto it = walk_.rbegin(); it != walk_.rend(); ++it) {
    PyObject* code = py.frame_code(*it);
    if (code == nullptr) {
      py.clear_error();
      continue;
    }
    const int offset = py.frame_lasti != nullptr ? py.frame_lasti(*it) : -1;
    const std::size_t depth = this_walk_.size();
    // A frame at a reused address with the same code and instruction under the same callers has the same stack too.
    as_before = as_before && offset >= 0 && depth < previous.size() && previous[depth].frame == *it &&
                previous[depth].code == code && previous[depth].offset == offset;
    std::int64_t stack_id = 0;
    if (as_before) {
      stack_id = previous[depth].stack_id;
    } else {
      stack_id = stackIdOf(parent, frameIdAt(py, *it, code, offset));
    }
    py.decref(code);  // frameIdAt interned it (code_names_ holds it): its address stays its own
    this_walk_.push_back({*it, code, offset, stack_id});
    parent = stack_id;
  }
  for (PyObject* frame : walk_) py.decref(frame);
  walk_.clear();
  previous.swap(this_walk_);
  return parent;
}

std::int64_t StackSampler::stackIdOf(std::int64_t parent, std::int64_t frame_id) {
  const auto [node, added] = stack_ids_.try_emplace({static_cast<std::uintptr_t>(parent), frame_id}, 0);
  if (added) {
    node->second = static_cast<std::int64_t>(stack_ids_.size());
    new_stacks_.push_back(store::Stack{node->second, parent, frame_id});
  }
  return node->second;
}

std::int64_t StackSampler::frameIdAt(const PythonApi& py, PyObject* frame, PyObject* code, int offset) {
  if (offset < 0) return frameIdOf(py, code, py.frame_line(frame));
  // A line is a function of the code object and the instruction offset; frameIdOf holds the code object, so its
  // address is never reused for another.
  const auto [node, added] = frame_ids_at_offset_.try_emplace({reinterpret_cast<std::uintptr_t>(code), offset}, 0);
  if (added) node->second = frameIdOf(py, code, py.frame_line(frame));
  return node->second;
}

std::int64_t StackSampler::frameIdOf(const PythonApi& py, PyObject* code, std::int64_t line) {
  const auto known = frame_ids_.find({reinterpret_cast<std::uintptr_t>(code), line});
  if (known != frame_ids_.end()) return known->second;
  auto [names, new_code] = code_names_.try_emplace(code);
  if (new_code) {
    py.incref(code);
    internCode(py, code, names->second);
  }
  return internFrame(reinterpret_cast<std::uintptr_t>(code), line, names->second.file, names->second.function);
}

std::int64_t StackSampler::internFrame(std::uintptr_t key, std::int64_t line, const std::string& file,
                                       const std::string& function) {
  const auto [node, added] = frame_ids_.try_emplace({key, line}, 0);
  if (!added) return node->second;
  node->second = static_cast<std::int64_t>(frame_ids_.size());
  new_frames_.push_back(store::StackFrame{node->second, file, line, function});
  return node->second;
}

void StackSampler::internCode(const PythonApi& py, PyObject* code, CodeNames& names) {
  names.file = textAttribute(py, code, "co_filename");
  names.function = textAttribute(py, code, "co_name");
  // The code object is held: its header and line table stay as read.
  names.read = layout_ != nullptr &&
               readCodeHeader(*layout_, reinterpret_cast<std::uintptr_t>(code),
                              reinterpret_cast<std::uintptr_t>(py.code_type), names.header) &&
               readBytes(*layout_, names.header.line_table, names.line_table);
}

void StackSampler::writeNewRecords() {
  Collector& collector = Collector::instance();
  for (auto& thread : new_threads_) collector.add(std::move(thread));
  for (auto& frame : new_frames_) collector.add(std::move(frame));
  for (auto& stack : new_stacks_) collector.add(stack);
  new_threads_.clear();
  new_frames_.clear();
  new_stacks_.clear();
}

void StackSampler::add(std::map<TotalsKey, Totals>& totals, std::int64_t step, const Credit& credit) {
  Totals& sum = totals[{step, credit.tid, credit.stack_id}];
  sum.samples += 1;
  sum.wall_ns += credit.wall_ns;
  if (credit.cpu_ns < 0) sum.cpu_known = false;
  sum.cpu_ns += std::max<std::int64_t>(credit.cpu_ns, 0);
}

void StackSampler::assign(std::int64_t step, std::int64_t start_ns, std::int64_t end_ns) {
  // A sample stands for the time since its thread's previous one, which may reach back before the kept steps (the
  // job's import and set-up, a step outside the capture window, a pause of the ticks): that time is not the step's,
  // and once the budget spaces ticks wider than the steps it would swell the first step that holds a sample.
  if (step >= 0 && start_ns != last_kept_end_ns_) kept_run_start_ns_ = start_ns;
  last_kept_end_ns_ = step >= 0 ? end_ns : -1;
  std::map<TotalsKey, Totals> of_step;
  auto done = pending_.begin();
  for (; done != pending_.end() && done->ts_ns <= end_ns; ++done) {
    if (done->ts_ns < start_ns || step < 0) {
      add(outside_steps_, -1, *done);
      continue;
    }
    Credit credit = *done;
    const std::int64_t within = credit.ts_ns - kept_run_start_ns_;
    if (credit.wall_ns > within) {
      // The thread's CPU over the interval is cut in the same proportion.
      if (credit.cpu_ns > 0) {
        credit.cpu_ns = static_cast<std::int64_t>(static_cast<double>(credit.cpu_ns) * static_cast<double>(within) /
                                                  static_cast<double>(credit.wall_ns));
      }
      credit.wall_ns = within;
    }
    add(of_step, step, credit);
  }
  pending_.erase(pending_.begin(), done);
  write(of_step);
}

void StackSampler::write(const std::map<TotalsKey, Totals>& totals) {
  Collector& collector = Collector::instance();
  for (const auto& [key, sum] : totals) {
    const auto& [step, tid, stack_id] = key;
    collector.add(
        store::StackSample{pid_, tid, step, stack_id, sum.samples, sum.wall_ns, sum.cpu_known ? sum.cpu_ns : -1});
  }
}

void StackSampler::stepEnded(std::int64_t index, std::int64_t start_ns, std::int64_t end_ns, bool kept) {
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  assign(kept ? index : -1, start_ns, end_ns);
}

std::string StackSampler::budgetReport() const {
  const std::int64_t cycles = budget_.cycles();
  char text[320];
  std::snprintf(text, sizeof text, "stack sampler: %lld ticks asked every %.1f ms, %.1f us of its thread's CPU each",
                static_cast<long long>(cycles), static_cast<double>(period_.count()) / 1e6,
                cycles > 0 ? static_cast<double>(budget_.cpuNs()) / 1e3 / static_cast<double>(cycles) : 0.0);
  std::string report = text;
  if (budget_.stretchedCycles() > 0) {
    std::snprintf(text, sizeof text,
                  "; %lld of them further apart, to keep its thread within %.2g %% of a core "
                  "(%s): every %.1f ms on average at the end",
                  static_cast<long long>(budget_.stretchedCycles()), budget_.percent(),
                  std::string(settings::kSampleBudget.name).c_str(),
                  static_cast<double>(budget_.meanInterval().count()) / 1e6);
    report += text;
  }
  return report;
}

std::string StackSampler::readerReport() const {
  std::int64_t with_gil = 0;
  for (const std::int64_t ticks : ticks_with_gil_) with_gil += ticks;
  const auto count = [&](GilReason reason) {
    return std::to_string(ticks_with_gil_[static_cast<std::size_t>(reason)]);
  };
  return "stack sampler: " + std::to_string(ticks_without_gil_) + " ticks read without the GIL, " +
         std::to_string(with_gil) + " with it (a new thread " + count(GilReason::kNewThread) + ", the thread list " +
         count(GilReason::kThreadList) + ", a code object " + count(GilReason::kCodeObject) +
         ", a frame's instruction " + count(GilReason::kFramePosition) + ")";
}

void StackSampler::stop(std::chrono::milliseconds patience) {
  bool finished = false;
  {
    const PythonApi& py = pythonApi();
    const bool holds_gil = py.gil_check != nullptr && py.gil_check() == 1;
    std::unique_lock lock(wake_mutex_);
    stopped_holding_gil_ = stopped_holding_gil_ || holds_gil;
    stopping_ = true;
    wake_.notify_all();
    window_.wakeWaiters();
    finished = wake_.wait_for(lock, patience, [&] { return finished_; });
  }
  if (thread_.joinable()) {
    if (finished) {
      thread_.join();
      Collector::instance().diagnostic("collector", "info", budgetReport());
      if (reader_ == StackReader::kDirect) Collector::instance().diagnostic("collector", "info", readerReport());
      if (reader_ == StackReader::kCompare) {
        Collector::instance().diagnostic("collector", "info",
                                         "stack sampler compare: " + std::to_string(compared_) +
                                             " thread samples read both ways, " + std::to_string(compare_differences_) +
                                             " differed");
      }
    } else {
      thread_.detach();
    }
  }
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  stopped_ = true;
  for (const Credit& credit : pending_) add(outside_steps_, -1, credit);
  pending_.clear();
  write(outside_steps_);
  outside_steps_.clear();
}

}  // namespace torchscope::collector
