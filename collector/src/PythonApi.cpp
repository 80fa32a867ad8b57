#include "PythonApi.h"

#include <dlfcn.h>

namespace torchscope::collector {

namespace {

template <class F>
void bind(F& function, const char* name) {
  function = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

const PythonApi& pythonApi() {
  static const PythonApi loaded = [] {
    PythonApi py;
    bind(py.is_initialized, "Py_IsInitialized");
    bind(py.is_finalizing, "Py_IsFinalizing");
    if (py.is_finalizing == nullptr) bind(py.is_finalizing, "_Py_IsFinalizing");
    bind(py.gil_check, "PyGILState_Check");
    bind(py.main_interpreter, "PyInterpreterState_Main");
    bind(py.thread_state_new, "PyThreadState_New");
    bind(py.thread_state_clear, "PyThreadState_Clear");
    bind(py.thread_state_delete_current, "PyThreadState_DeleteCurrent");
    bind(py.restore_thread, "PyEval_RestoreThread");
    bind(py.save_thread, "PyEval_SaveThread");
    bind(py.gc_disable, "PyGC_Disable");
    bind(py.gc_enable, "PyGC_Enable");
    bind(py.get_frame, "PyEval_GetFrame");
    bind(py.frame_back, "PyFrame_GetBack");
    bind(py.frame_code, "PyFrame_GetCode");
    bind(py.frame_line, "PyFrame_GetLineNumber");
    bind(py.frame_lasti, "PyFrame_GetLasti");
    bind(py.current_frames, "_PyThread_CurrentFrames");
    bind(py.sys_object, "PySys_GetObject");
    bind(py.call, "PyObject_CallObject");
    bind(py.get_attr, "PyObject_GetAttrString");
    bind(py.dict_get, "PyDict_GetItem");
    bind(py.dict_get_string, "PyDict_GetItemString");
    bind(py.dict_next, "PyDict_Next");
    bind(py.as_unsigned_long, "PyLong_AsUnsignedLong");
    bind(py.as_long_long, "PyLong_AsLongLong");
    bind(py.utf8, "PyUnicode_AsUTF8");
    bind(py.incref, "Py_IncRef");
    bind(py.decref, "Py_DecRef");
    bind(py.clear_error, "PyErr_Clear");
    bind(py.new_function, "PyCFunction_NewEx");
    bind(py.build_value, "Py_BuildValue");
    bind(py.bool_from_long, "PyBool_FromLong");
    bind(py.error_occurred, "PyErr_Occurred");
    bind(py.version, "Py_Version");
    bind(py.code_type, "PyCode_Type");
    bind(py.code_line, "PyCode_Addr2Line");
    return py;
  }();
  return loaded;
}

PyObject* currentFramesOfAllThreads(const PythonApi& py) {
  PyObject* frames = nullptr;
  if (py.current_frames != nullptr) {
    frames = py.current_frames();
  } else if (PyObject* function = py.sys_object("_current_frames")) {
    frames = py.call(function, nullptr);
  }
  if (frames == nullptr) py.clear_error();
  return frames;
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

}  // namespace torchscope::collector
