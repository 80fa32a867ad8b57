// The stack sampler's reader without the GIL (StackSampler.h, PythonMemory.h): a tick reads every thread's frames
// from the interpreter's memory while the job's threads run on, and takes the GIL only to name a new thread or when
// what it read cannot be trusted.
#include <time.h>

#include <algorithm>

#include "Collector.h"
#include "Environment.h"
#include "StackSampler.h"
#include "torchscope/base/Clock.h"

namespace torchscope::collector {

namespace {

// At most once in this while, a tick that met unheld code objects takes the GIL to hold them (a forced switch for a
// thread that holds it, once a second).
constexpr std::int64_t kHoldIntervalNs = 1'000'000'000;

// CPU time of a thread of this process by its kernel id, -1 when it cannot be read: Linux's per-thread CPU clock
// (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)), which fails for a thread that ended rather than read a freed pthread
// descriptor, and for a thread of another process.
std::int64_t threadCpuNanosOfTid(std::int64_t tid) {
  if (tid <= 0 || tid > 0x1fffffff) return -1;
  const auto clock = static_cast<clockid_t>((~static_cast<std::uint32_t>(tid) << 3) | 6U);
  timespec now{};
  if (clock_gettime(clock, &now) != 0) return -1;
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// Names read from memory that may have been freed under the reader are kept only when they look like names.
bool printable(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
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
    message = "stack sampler: stacks read with the GIL (" + std::string(settings::kSampleReader.name) + "=gil)";
  } else {
    const unsigned long version = py.version != nullptr ? *py.version : 0;
    const std::string name = version != 0
                                 ? std::to_string((version >> 24) & 0xff) + "." + std::to_string((version >> 16) & 0xff)
                                 : "before 3.11";
    message = "stack sampler: stacks read with the GIL (no reader without it for Python " + name +
              "): a thread that computes in pure Python is seen where it next lets the GIL go";
  }
  collector.diagnostic("collector", "info", message);
}

bool StackSampler::tickWithoutGil() {
  const std::int64_t now_ns = base::monotonicNow();
  if (!readThreads(*layout_, interpreter_, reinterpret_cast<std::uintptr_t>(thread_state_), raw_threads_)) {
    gil_reason_ = GilReason::kThreadList;
    return false;
  }
  std::vector<std::int64_t> cpu_ns(raw_threads_.size(), -1);
  for (std::size_t i = 0; i < raw_threads_.size(); ++i) {
    if (!raw_threads_[i].frames.empty()) cpu_ns[i] = threadCpuNanosOfTid(raw_threads_[i].native_id);
  }
  if (!resolveRawThreads()) return false;
  for (std::size_t i = 0; i < raw_threads_.size(); ++i) {
    if (direct_stacks_[i].empty()) continue;
    // A thread not named yet is named with the GIL, as the GIL walk does.
    const auto clock = clocks_.find(raw_threads_[i].ident);
    if (clock == clocks_.end() || (clock->second.tid < 0 && clock->second.lookups < kMaxThreadLookups)) {
      gil_reason_ = GilReason::kNewThread;
      return false;
    }
  }
  std::vector<Walked> walked;
  for (std::size_t i = 0; i < raw_threads_.size(); ++i) {
    if (direct_stacks_[i].empty()) continue;
    const unsigned long ident = raw_threads_[i].ident;
    walked.push_back({ident, nullptr, directStackOf(direct_stacks_[i], last_direct_walks_[ident]), cpu_ns[i]});
  }
  std::vector<Credit> credits;
  creditThreads(nullptr, now_ns, walked, credits);
  if (unheld_frames_ > 0 && now_ns - last_hold_ns_ >= kHoldIntervalNs) {
    last_hold_ns_ = now_ns;
    holdCodesWithGil(pythonApi());
  }
  writeNewRecords();
  keepCredits(credits);
  return true;
}

bool StackSampler::resolveRawThreads() {
  direct_stacks_.resize(raw_threads_.size());
  unheld_frames_ = 0;
  for (std::size_t i = 0; i < raw_threads_.size(); ++i) {
    std::vector<DirectFrame>& stack = direct_stacks_[i];
    stack.clear();
    for (const RawFrame& raw : raw_threads_[i].frames) {
      if (stack.size() == kMaxStackDepth) break;
      // A held code object (code_names_) is trusted by its address; any other is read, and named by what it reads.
      const auto names = code_names_.find(reinterpret_cast<PyObject*>(raw.code));
      const bool held = names != code_names_.end() && names->second.read;
      const std::uintptr_t key = held ? raw.code : unheldCodeAt(raw.code);
      if (key == 0) {
        gil_reason_ = GilReason::kCodeObject;
        return false;
      }
      const UnheldCode* unheld = held ? nullptr : &unheld_codes_[key & ~kUnheldKey];
      if (!held) ++unheld_frames_;
      const CodeHeader& header = held ? names->second.header : unheld->header;
      const auto distance = static_cast<std::int64_t>(raw.prev_instr - header.shape.first_instruction);
      const std::int64_t unit = distance / 2;  // _Py_CODEUNIT: two bytes
      // Not started yet (_PyFrame_IsIncomplete): sys._current_frames and PyFrame_GetBack pass over it too.
      if (!raw.owned_by_generator && unit < header.shape.first_traceable) continue;
      if (distance % 2 != 0 || unit < 0 || unit >= header.shape.code_units) {  // a torn read
        gil_reason_ = GilReason::kFramePosition;
        return false;
      }
      const int offset = static_cast<int>(unit * 2);
      const auto [node, added] = frame_ids_at_offset_.try_emplace({key, offset}, 0);
      if (added) {
        const std::string& table = held ? names->second.line_table : unheld->line_table;
        const int line = lineAtOffset(table, header.first_line, offset);
        node->second = held ? internFrame(key, line, names->second.file, names->second.function)
                            : internFrame(key, line, unheld->file, unheld->function);
      }
      stack.push_back({raw.address, key, offset});
    }
  }
  return true;
}

std::uintptr_t StackSampler::unheldCodeAt(std::uintptr_t address) {
  CodeHeader header;
  if (!readCodeHeader(*layout_, address, reinterpret_cast<std::uintptr_t>(pythonApi().code_type), header)) return 0;
  std::vector<std::size_t>& candidates = unheld_at_[address];
  for (const std::size_t index : candidates) {
    if (unheld_codes_[index].header == header) return kUnheldKey | index;
  }
  if (unheld_codes_.size() >= kMaxUnheldCodes) return 0;
  UnheldCode code{header, "", "", ""};
  if (!readAsciiText(*layout_, header.filename, code.file) || !readAsciiText(*layout_, header.name, code.function) ||
      !printable(code.file) || !printable(code.function) || !readBytes(*layout_, header.line_table, code.line_table)) {
    return 0;
  }
  candidates.push_back(unheld_codes_.size());
  unheld_codes_.push_back(std::move(code));
  return kUnheldKey | (unheld_codes_.size() - 1);
}

std::int64_t StackSampler::directStackOf(const std::vector<DirectFrame>& frames, std::vector<WalkedFrame>& previous) {
  this_walk_.clear();
  std::int64_t parent = -1;
  bool as_before = true;  // as in stackOf, frames compared by the address of their _PyInterpreterFrame
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    const std::size_t depth = this_walk_.size();
    auto* address = reinterpret_cast<PyObject*>(it->address);  // compared, never dereferenced
    auto* code = reinterpret_cast<PyObject*>(it->code);
    as_before = as_before && depth < previous.size() && previous[depth].frame == address &&
                previous[depth].code == code && previous[depth].offset == it->offset;
    const std::int64_t stack_id =
        as_before ? previous[depth].stack_id : stackIdOf(parent, frame_ids_at_offset_.at({it->code, it->offset}));
    this_walk_.push_back({address, code, it->offset, stack_id});
    parent = stack_id;
  }
  previous.swap(this_walk_);
  return parent;
}

void StackSampler::compareReaders(const PythonApi& py, const std::vector<Walked>& walked) {
  std::unordered_map<unsigned long, std::int64_t> walked_stacks;
  for (const Walked& thread : walked) walked_stacks[thread.ident] = thread.stack_id;
  if (!readThreads(*layout_, interpreter_, reinterpret_cast<std::uintptr_t>(thread_state_), raw_threads_) ||
      !resolveRawThreads()) {
    compared_ += static_cast<std::int64_t>(walked.size());
    compare_differences_ += static_cast<std::int64_t>(walked.size());
    return;
  }
  std::size_t read_directly = 0;
  for (std::size_t i = 0; i < raw_threads_.size(); ++i) {
    if (direct_stacks_[i].empty()) continue;
    ++read_directly;
    const unsigned long ident = raw_threads_[i].ident;
    const std::int64_t stack_id = directStackOf(direct_stacks_[i], last_direct_walks_[ident]);
    const auto by_gil = walked_stacks.find(ident);
    bool same = by_gil != walked_stacks.end() && by_gil->second == stack_id;
    // The GIL walk interned most (code, offset) pairs first: the line table reader is checked against CPython's.
    for (const DirectFrame& frame : direct_stacks_[i]) {
      const auto names = code_names_.find(reinterpret_cast<PyObject*>(frame.code));
      if (names == code_names_.end() || !names->second.read) {
        same = false;
        continue;
      }
      const int line = lineAtOffset(names->second.line_table, names->second.header.first_line, frame.offset);
      same = same && line == py.code_line(reinterpret_cast<PyObject*>(frame.code), frame.offset);
    }
    ++compared_;
    if (!same) ++compare_differences_;
  }
  // A thread the GIL walk saw that the direct reader did not.
  if (walked.size() > read_directly) compare_differences_ += static_cast<std::int64_t>(walked.size() - read_directly);
}

}  // namespace torchscope::collector
