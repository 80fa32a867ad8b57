// Reading the interpreter's threads and frames without the GIL, from a thread of the collector, as a profiler in
// another process would: every read of the interpreter's memory goes through process_vm_readv on this process, so
// that memory a job's thread frees (a frame popped, a thread state deleted) makes the read fail or return stale bytes
// instead of faulting. Nothing read is dereferenced: the caller trusts a code object's address only when it holds a
// reference to that object. Only CPython 3.11's layout is known (kLayout311, proved against its internal headers by
// collector_python_layout_tests); any other version reads with the GIL.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "PythonApi.h"

namespace torchscope::collector {

// Where the fields the reader needs lie in one CPython version's structures (64-bit).
struct InterpreterLayout {
  std::size_t interp_threads_head;    // PyInterpreterState.threads.head
  std::size_t tstate_next;            // PyThreadState.next
  std::size_t tstate_cframe;          // PyThreadState.cframe
  std::size_t tstate_thread_id;       // PyThreadState.thread_id (the pthread_t: sys._current_frames' key)
  std::size_t tstate_native_id;       // PyThreadState.native_thread_id (the kernel's thread id)
  std::size_t cframe_current_frame;   // _PyCFrame.current_frame
  std::size_t frame_code;             // _PyInterpreterFrame.f_code
  std::size_t frame_previous;         // _PyInterpreterFrame.previous
  std::size_t frame_prev_instr;       // _PyInterpreterFrame.prev_instr
  std::size_t frame_owner;            // _PyInterpreterFrame.owner (a char)
  std::size_t code_size;              // PyVarObject.ob_size of a code object: its length in code units
  std::size_t code_first_traceable;   // PyCodeObject._co_firsttraceable (an int)
  std::size_t code_adaptive;          // PyCodeObject.co_code_adaptive: _PyCode_CODE(code)
  char owned_by_generator;            // FRAME_OWNED_BY_GENERATOR
  std::size_t object_type;            // PyObject.ob_type
  std::size_t code_filename;          // PyCodeObject.co_filename
  std::size_t code_name;              // PyCodeObject.co_name
  std::size_t code_line_table;        // PyCodeObject.co_linetable (bytes, Objects/locations.md)
  std::size_t code_first_line;        // PyCodeObject.co_firstlineno (an int)
  std::size_t text_length;            // PyASCIIObject.length
  std::size_t text_state;             // PyASCIIObject.state (a 32-bit field)
  std::size_t ascii_data;             // sizeof(PyASCIIObject): where a compact ASCII string's characters start
  unsigned text_compact_ascii_ready;  // the state bits compact, ascii and ready
  std::size_t bytes_size;             // PyVarObject.ob_size of a bytes object
  std::size_t bytes_data;             // PyBytesObject.ob_sval
};

inline constexpr InterpreterLayout kLayout311{16, 8, 56,  152, 160, 8,  32, 48, 56, 69,   16, 168, 184,
                                              1,  8, 112, 120, 136, 72, 16, 32, 48, 0xe0, 16, 32};

// The layout of the running interpreter (Py_Version), null when it is not one the reader knows.
[[nodiscard]] const InterpreterLayout* layoutOfRunningInterpreter(const PythonApi& py);

// Copies `size` bytes at `address` of this process into `out`: false when any of it cannot be read.
bool readOwnMemory(std::uintptr_t address, void* out, std::size_t size);

// Where a code object's instructions lie, and the first one of a frame that has started.
struct CodeShape {
  std::uintptr_t first_instruction = 0;  // _PyCode_CODE(code)
  std::int64_t code_units = 0;
  std::int64_t first_traceable = 0;  // a frame before this code unit has not started (_PyFrame_IsIncomplete)
  bool operator==(const CodeShape&) const = default;
};

// A code object read without being held: what names its frames, and what tells another code object later at the
// same address apart (its filename, name and line table objects).
struct CodeHeader {
  std::uintptr_t filename = 0;
  std::uintptr_t name = 0;
  std::uintptr_t line_table = 0;
  int first_line = 0;
  CodeShape shape;
  bool operator==(const CodeHeader&) const = default;
};
// False unless `code` reads as a code object (its type is `code_type`, PyCode_Type) with a plausible shape.
[[nodiscard]] bool readCodeHeader(const InterpreterLayout& layout, std::uintptr_t code, std::uintptr_t code_type,
                                  CodeHeader& header);
// A str object's text: only a compact ASCII one (as file and function names are), false for any other.
[[nodiscard]] bool readAsciiText(const InterpreterLayout& layout, std::uintptr_t text, std::string& out);
// A bytes object's contents (up to 1 MiB).
[[nodiscard]] bool readBytes(const InterpreterLayout& layout, std::uintptr_t bytes, std::string& out);
// The line of the instruction at `offset` (bytes) by a code object's line table (CPython 3.11's format,
// Objects/locations.md), as PyCode_Addr2Line gives it: -1 for an instruction without a location, or past the table.
[[nodiscard]] int lineAtOffset(const std::string& line_table, int first_line, int offset);

// One frame as read: its code object's address (unverified) and the address of the code unit before its next
// instruction (_PyInterpreterFrame.prev_instr).
struct RawFrame {
  std::uintptr_t address = 0;
  std::uintptr_t code = 0;
  std::uintptr_t prev_instr = 0;
  bool owned_by_generator = false;
};
struct RawThread {
  unsigned long ident = 0;  // PyThreadState.thread_id
  std::int64_t native_id = 0;
  std::vector<RawFrame> frames;  // innermost first, incomplete frames included
};

inline constexpr std::size_t kMaxRawThreads = 4096;
inline constexpr std::size_t kMaxRawFrames = 1024;  // per thread: bounds a walk through a cycle of garbage

// Every thread state of `interpreter` but `reader_state` (the reader's own, which has no frames while it reads; 0 for
// none) and its frames, innermost first, into `threads` (reusing its storage). False when the list of threads could
// not be read through (a thread state freed under the reader): the caller reads with the GIL. A thread's frames that
// end in an unreadable one are cut there; the caller checks each code object.
bool readThreads(const InterpreterLayout& layout, std::uintptr_t interpreter, std::uintptr_t reader_state,
                 std::vector<RawThread>& threads);

}  // namespace torchscope::collector
