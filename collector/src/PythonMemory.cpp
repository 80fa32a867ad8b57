#include "PythonMemory.h"

#include <dlfcn.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "ProcessIds.h"

namespace torchscope::collector {

namespace {

// A span of one structure read at once: the fields from `first` to `last` (+ their size), copied into a buffer.
template <std::size_t N>
class Span {
 public:
  template <class Reader = decltype(readOwnMemory)>
  bool read(std::uintptr_t base, std::size_t first, std::size_t end, Reader&& reader = readOwnMemory) {
    first_ = first;
    return end - first <= N && reader(base + first, bytes_.data(), end - first);
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

// A copy of the memory below the frame last read: a thread's frames lie next to each other on its data stack, callers
// below callees, so that one read of the 8 KiB below a frame holds most of its callers' (one system call for a stack,
// not one a frame). The copy is one moment's, as consistent as the frames read one by one.
class FrameWindow {
 public:
  bool operator()(std::uintptr_t address, void* out, std::size_t size) {
    if (address < start_ || address + size > start_ + length_) {
      const std::uintptr_t end = address + size;
      // The 8 KiB below, else from the start of the frame's page (both mapped when the frame is), else the frame.
      const std::uintptr_t below = end > kBytes ? end - kBytes : 0;
      const std::uintptr_t page = address & ~(kPage - 1);
      if (below != 0 && readOwnMemory(below, bytes_.data(), kBytes)) {
        start_ = below;
      } else if (page != 0 && readOwnMemory(page, bytes_.data(), end - page)) {
        start_ = page;
      } else {
        length_ = 0;
        return readOwnMemory(address, out, size);
      }
      length_ = end - start_;
    }
    std::memcpy(out, bytes_.data() + (address - start_), size);
    return true;
  }

 private:
  static constexpr std::uintptr_t kBytes = 8192;
  static constexpr std::uintptr_t kPage = 4096;
  std::array<unsigned char, kBytes> bytes_{};
  std::uintptr_t start_ = 0;
  std::uintptr_t length_ = 0;
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
  return process_vm_readv(static_cast<pid_t>(processId()), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

bool readCodeHeader(const InterpreterLayout& layout, std::uintptr_t code, std::uintptr_t code_type,
                    CodeHeader& header) {
  const std::size_t first = layout.object_type;
  const std::size_t end = std::max({layout.code_filename, layout.code_name, layout.code_line_table,
                                    layout.code_first_line, layout.code_first_traceable, layout.code_size}) +
                          8;
  Span<256> fields;
  if (code_type == 0 || !fields.read(code, first, end) || fields.at<std::uintptr_t>(layout.object_type) != code_type) {
    return false;
  }
  header.filename = fields.at<std::uintptr_t>(layout.code_filename);
  header.name = fields.at<std::uintptr_t>(layout.code_name);
  header.line_table = fields.at<std::uintptr_t>(layout.code_line_table);
  header.first_line = fields.at<int>(layout.code_first_line);
  header.shape.first_instruction = code + layout.code_adaptive;
  header.shape.code_units = fields.at<std::int64_t>(layout.code_size);
  header.shape.first_traceable = fields.at<int>(layout.code_first_traceable);
  return header.shape.code_units > 0 && header.shape.first_traceable >= 0 &&
         header.shape.first_traceable < header.shape.code_units;
}

bool readAsciiText(const InterpreterLayout& layout, std::uintptr_t text, std::string& out) {
  constexpr std::int64_t kMaxText = 4096;
  Span<64> fields;
  if (!fields.read(text, layout.text_length, std::max(layout.text_length, layout.text_state) + 8)) return false;
  const std::int64_t length = fields.at<std::int64_t>(layout.text_length);
  const unsigned state = fields.at<unsigned>(layout.text_state);
  if ((state & layout.text_compact_ascii_ready) != layout.text_compact_ascii_ready || length < 0 || length > kMaxText) {
    return false;
  }
  out.resize(static_cast<std::size_t>(length));
  return length == 0 || readOwnMemory(text + layout.ascii_data, out.data(), out.size());
}

bool readBytes(const InterpreterLayout& layout, std::uintptr_t bytes, std::string& out) {
  constexpr std::int64_t kMaxBytes = 1 << 20;
  std::int64_t size = 0;
  if (!readOwnMemory(bytes + layout.bytes_size, &size, sizeof(size)) || size < 0 || size > kMaxBytes) return false;
  out.resize(static_cast<std::size_t>(size));
  return size == 0 || readOwnMemory(bytes + layout.bytes_data, out.data(), out.size());
}

int lineAtOffset(const std::string& line_table, int first_line, int offset) {
  // Each entry: a first byte with its top bit set (bits 3-6 its kind, bits 0-2 its length in code units minus one),
  // then bytes without it. Only the start line matters here: the kinds 0-9 keep it, 10-12 add (kind - 10), 13 and
  // 14 add the signed varint that follows, 15 has no location.
  const auto byte = [&](std::size_t at) { return static_cast<unsigned char>(line_table[at]); };
  int line = first_line;
  int start = 0;
  std::size_t at = 0;
  while (at < line_table.size()) {
    const unsigned char head = byte(at++);
    if ((head & 0x80) == 0) return -1;  // not an entry's first byte: a table this reader does not know
    const unsigned kind = (head >> 3) & 15;
    const int end = start + 2 * static_cast<int>((head & 7) + 1);
    if (kind >= 10 && kind <= 12) {
      line += static_cast<int>(kind) - 10;
    } else if (kind == 13 || kind == 14) {
      // Unsigned varint in 6-bit chunks, least significant first, bit 6 set on all but the last; the sign in bit 0.
      unsigned value = 0;
      unsigned shift = 0;
      while (at < line_table.size() && shift < 32) {
        const unsigned char chunk = byte(at++);
        value |= static_cast<unsigned>(chunk & 63) << shift;
        shift += 6;
        if ((chunk & 64) == 0) break;
      }
      line += (value & 1) != 0 ? -static_cast<int>(value >> 1) : static_cast<int>(value >> 1);
    }
    if (offset >= start && offset < end) return kind == 15 ? -1 : line;
    while (at < line_table.size() && (byte(at) & 0x80) == 0) ++at;  // the entry's remaining bytes
    start = end;
  }
  return -1;
}

namespace {

// The frames under a thread's _PyCFrame, innermost first.
void readFrames(const InterpreterLayout& layout, std::uintptr_t cframe, std::vector<RawFrame>& frames) {
  frames.clear();
  std::uintptr_t frame = 0;
  if (!readOwnMemory(cframe + layout.cframe_current_frame, &frame, sizeof(frame))) return;
  const std::size_t first = std::min({layout.frame_code, layout.frame_previous, layout.frame_prev_instr});
  const std::size_t end =
      std::max({layout.frame_code + 8, layout.frame_previous + 8, layout.frame_prev_instr + 8, layout.frame_owner + 1});
  Span<128> fields;
  FrameWindow window;
  while (frame != 0 && frames.size() < kMaxRawFrames && fields.read(frame, first, end, window)) {
    RawFrame raw;
    raw.address = frame;
    raw.code = fields.at<std::uintptr_t>(layout.frame_code);
    raw.prev_instr = fields.at<std::uintptr_t>(layout.frame_prev_instr);
    raw.owned_by_generator = fields.at<char>(layout.frame_owner) == layout.owned_by_generator;
    frames.push_back(raw);
    frame = fields.at<std::uintptr_t>(layout.frame_previous);
  }
}

}  // namespace

bool readThreads(const InterpreterLayout& layout, std::uintptr_t interpreter, std::uintptr_t reader_state,
                 std::vector<RawThread>& threads) {
  std::size_t count = 0;
  std::uintptr_t state = 0;
  if (!readOwnMemory(interpreter + layout.interp_threads_head, &state, sizeof(state))) return false;
  const std::size_t first =
      std::min({layout.tstate_next, layout.tstate_cframe, layout.tstate_thread_id, layout.tstate_native_id});
  const std::size_t end =
      std::max({layout.tstate_next, layout.tstate_cframe, layout.tstate_thread_id, layout.tstate_native_id}) + 8;
  Span<256> fields;
  while (state != 0) {
    if (count == kMaxRawThreads || !fields.read(state, first, end)) return false;
    if (state != reader_state) {
      if (threads.size() <= count) threads.emplace_back();
      RawThread& thread = threads[count++];
      thread.ident = fields.at<unsigned long>(layout.tstate_thread_id);
      thread.native_id = static_cast<std::int64_t>(fields.at<unsigned long>(layout.tstate_native_id));
      readFrames(layout, fields.at<std::uintptr_t>(layout.tstate_cframe), thread.frames);
    }
    state = fields.at<std::uintptr_t>(layout.tstate_next);
  }
  threads.resize(count);
  return true;
}

}  // namespace torchscope::collector
