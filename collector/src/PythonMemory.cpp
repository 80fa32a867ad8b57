#include "PythonMemory.h"

#include <dlfcn.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace torchscope::collector {

namespace {

// A span of one structure read at once: the fields from `first` to `last` (+ their size), copied into a buffer.
template <std::size_t N>
class Span {
 public:
  bool read(std::uintptr_t base, std::size_t first, std::size_t end) {
    first_ = first;
    return end - first <= N && readOwnMemory(base + first, bytes_.data(), end - first);
  }
  template <class T>
  T at(std::size_t offset) const {
    T value;
    std::memcpy(&value, bytes_.data() + (offset - first_), sizeof(T));
    return value;
  }

 private:
  std::array<unsigned char, N> bytes_{};
  std::size_t first_ = 0;
};

}  // namespace

const InterpreterLayout* layoutOfRunningInterpreter(const PythonApi& py) {
  if (sizeof(void*) != 8 || py.version == nullptr) return nullptr;
  const unsigned long version = *py.version;  // 0xMMmmPPRS: Py_Version is constant data of libpython
  const unsigned long major = (version >> 24) & 0xff;
  const unsigned long minor = (version >> 16) & 0xff;
  return major == 3 && minor == 11 ? &kLayout311 : nullptr;
}

bool readOwnMemory(std::uintptr_t address, void* out, std::size_t size) {
  if (address == 0 || size == 0) return false;
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

bool readCodeShape(const InterpreterLayout& layout, std::uintptr_t code, CodeShape& shape) {
  std::int64_t size = 0;
  int first_traceable = 0;
  if (!readOwnMemory(code + layout.code_size, &size, sizeof(size)) ||
      !readOwnMemory(code + layout.code_first_traceable, &first_traceable, sizeof(first_traceable))) {
    return false;
  }
  shape.first_instruction = code + layout.code_adaptive;
  shape.code_units = size;
  shape.first_traceable = first_traceable;
  return size > 0;
}

void readFramesOf(const InterpreterLayout& layout, std::uintptr_t thread_state, std::vector<RawFrame>& frames) {
  frames.clear();
  std::uintptr_t cframe = 0;
  std::uintptr_t frame = 0;
  if (!readOwnMemory(thread_state + layout.tstate_cframe, &cframe, sizeof(cframe)) ||
      !readOwnMemory(cframe + layout.cframe_current_frame, &frame, sizeof(frame))) {
    return;
  }
  const std::size_t first = std::min({layout.frame_code, layout.frame_previous, layout.frame_prev_instr});
  const std::size_t end = std::max({layout.frame_code + 8, layout.frame_previous + 8, layout.frame_prev_instr + 8,
                                    layout.frame_owner + 1});
  Span<128> fields;
  while (frame != 0 && frames.size() < kMaxRawFrames && fields.read(frame, first, end)) {
    RawFrame raw;
    raw.address = frame;
    raw.code = fields.at<std::uintptr_t>(layout.frame_code);
    raw.prev_instr = fields.at<std::uintptr_t>(layout.frame_prev_instr);
    raw.owned_by_generator = fields.at<char>(layout.frame_owner) == layout.owned_by_generator;
    frames.push_back(raw);
    frame = fields.at<std::uintptr_t>(layout.frame_previous);
  }
}

bool readThreads(const InterpreterLayout& layout, std::uintptr_t interpreter, std::vector<RawThread>& threads) {
  std::size_t count = 0;
  std::uintptr_t state = 0;
  if (!readOwnMemory(interpreter + layout.interp_threads_head, &state, sizeof(state))) return false;
  const std::size_t first = std::min({layout.tstate_next, layout.tstate_thread_id, layout.tstate_native_id});
  const std::size_t end = std::max({layout.tstate_next, layout.tstate_thread_id, layout.tstate_native_id}) + 8;
  Span<256> fields;
  while (state != 0) {
    if (count == kMaxRawThreads || !fields.read(state, first, end)) return false;
    if (threads.size() <= count) threads.emplace_back();
    RawThread& thread = threads[count++];
    thread.ident = fields.at<unsigned long>(layout.tstate_thread_id);
    thread.native_id = static_cast<std::int64_t>(fields.at<unsigned long>(layout.tstate_native_id));
    readFramesOf(layout, state, thread.frames);
    state = fields.at<std::uintptr_t>(layout.tstate_next);
  }
  threads.resize(count);
  return true;
}

}  // namespace torchscope::collector
