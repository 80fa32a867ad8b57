#include "PythonFrames.h"

#include <dlfcn.h>

#include <algorithm>
#include <string_view>

namespace torchscope::collector {

namespace {

using PyObject = void;
constexpr std::size_t kMaxFrames = 64;

struct PythonApi {
  int (*gil_check)() = nullptr;
  PyObject* (*get_frame)() = nullptr;        // borrowed
  PyObject* (*frame_back)(PyObject*) = nullptr;  // new reference
  PyObject* (*frame_code)(PyObject*) = nullptr;  // new reference
  int (*frame_line)(PyObject*) = nullptr;
  PyObject* (*get_attr)(PyObject*, const char*) = nullptr;  // new reference
  const char* (*utf8)(PyObject*) = nullptr;
  void (*decref)(PyObject*) = nullptr;
  void (*clear_error)() = nullptr;

  [[nodiscard]] bool complete() const {
    return gil_check && get_frame && frame_back && frame_code && frame_line && get_attr && utf8 && decref &&
           clear_error;
  }
};

template <class F>
void bind(F& function, const char* name) {
  function = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

const PythonApi& api() {
  static const PythonApi loaded = [] {
    PythonApi result;
    bind(result.gil_check, "PyGILState_Check");
    bind(result.get_frame, "PyEval_GetFrame");
    bind(result.frame_back, "PyFrame_GetBack");
    bind(result.frame_code, "PyFrame_GetCode");
    bind(result.frame_line, "PyFrame_GetLineNumber");
    bind(result.get_attr, "PyObject_GetAttrString");
    bind(result.utf8, "PyUnicode_AsUTF8");
    bind(result.decref, "Py_DecRef");
    bind(result.clear_error, "PyErr_Clear");
    return result;
  }();
  return loaded;
}

std::string textAttribute(const PythonApi& py, PyObject* object, const char* name) {
  PyObject* value = py.get_attr(object, name);
  if (value == nullptr) {
    py.clear_error();
    return "";
  }
  const char* text = py.utf8(value);
  std::string result = text != nullptr ? text : "";
  if (text == nullptr) py.clear_error();
  py.decref(value);
  return result;
}

bool isInternal(std::string_view file) {
  return file.find("/torch/") != std::string_view::npos || file.find("torchscope_bridge") != std::string_view::npos ||
         file.rfind("<frozen", 0) == 0;
}

}  // namespace

std::vector<PythonFrame> currentUserFrames() {
  const PythonApi& py = api();
  std::vector<PythonFrame> frames;
  if (!py.complete() || py.gil_check() != 1) return frames;
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
