// The calling thread's Python stack, read through the interpreter's C API found with dlsym, so
// that the library does not link against any particular libpython.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace torchscope::collector {

struct PythonFrame {
  std::string file;
  std::int64_t line = -1;
  std::string function;
};

// The innermost 64 frames without torch's and the bridge's own, outermost first (other libraries' frames
// stay: the caller picks the user's frame). Empty when
// the thread does not hold the GIL, since only then is the interpreter's state safe to read.
[[nodiscard]] std::vector<PythonFrame> currentUserFrames();

}  // namespace torchscope::collector
