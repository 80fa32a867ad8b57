#include "PythonFrames.h"

#include "PythonApi.h"

#include <algorithm>
#include <string_view>

namespace torchscope::collector {

namespace {

constexpr std::size_t kMaxFrames = 64;

bool isInternal(std::string_view file) {
  return file.find("/torch/") != std::string_view::npos || file.find("torchscope_bridge") != std::string_view::npos ||
         file.rfind("<frozen", 0) == 0;
}

}  // namespace

std::vector<PythonFrame> currentUserFrames() {
  const PythonApi& py = pythonApi();
  std::vector<PythonFrame> frames;
  if (!py.canReadOwnStack() || py.gil_check() != 1) return frames;
  PyObject* frame = py.get_frame();
  if (frame == nullptr) return frames;
  // get_frame is borrowed; hold our own reference so that the walk below can release each step.
  PyObject* back = nullptr;
  bool owned = false;
  while (frame != nullptr && frames.size() < kMaxFrames) {
    PyObject* code = py.frame_code(frame);
    if (code != nullptr) {
      PythonFrame entry{textAttribute(py, code, "co_filename"), py.frame_line(frame),
                        textAttribute(py, code, "co_name")};
      py.decref(code);
      if (!isInternal(entry.file)) frames.push_back(std::move(entry));
    }
    back = py.frame_back(frame);
    if (owned) py.decref(frame);
    frame = back;
    owned = true;
  }
  if (owned && frame != nullptr) py.decref(frame);
  std::reverse(frames.begin(), frames.end());
  return frames;
}

}  // namespace torchscope::collector
