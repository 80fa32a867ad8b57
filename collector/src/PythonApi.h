// The parts of the interpreter's C API the collector calls, found with dlsym so that the library links against no
// particular libpython. A function missing from this interpreter leaves its pointer null.
#pragma once

#include <string>

namespace torchscope::collector {

using PyObject = void;
using PyThreadState = void;
using PyInterpreterState = void;

struct PythonApi {
  int (*is_initialized)() = nullptr;
  int (*is_finalizing)() = nullptr;  // Py_IsFinalizing (3.13) or _Py_IsFinalizing (before)
  int (*gil_check)() = nullptr;
  // A thread state of the collector's own, kept across many takes of the GIL (PyGILState_Ensure/Release make and
  // free one per pair on a thread that has none).
  PyInterpreterState* (*main_interpreter)() = nullptr;                // PyInterpreterState_Main
  PyThreadState* (*thread_state_new)(PyInterpreterState*) = nullptr;  // PyThreadState_New
  void (*thread_state_clear)(PyThreadState*) = nullptr;               // PyThreadState_Clear: with the GIL
  void (*thread_state_delete_current)() = nullptr;                    // PyThreadState_DeleteCurrent: lets the GIL go
  void (*restore_thread)(PyThreadState*) = nullptr;                   // PyEval_RestoreThread: takes the GIL
  PyThreadState* (*save_thread)() = nullptr;                          // PyEval_SaveThread: lets the GIL go
  int (*gc_disable)() = nullptr;                 // PyGC_Disable (3.10+): the previous state, 1 when it was enabled
  int (*gc_enable)() = nullptr;                  // PyGC_Enable
  PyObject* (*get_frame)() = nullptr;            // borrowed
  PyObject* (*frame_back)(PyObject*) = nullptr;  // new reference
  PyObject* (*frame_code)(PyObject*) = nullptr;  // new reference
  int (*frame_line)(PyObject*) = nullptr;
  int (*frame_lasti)(PyObject*) = nullptr;            // PyFrame_GetLasti (3.11+): the instruction offset, -1 when none
  PyObject* (*current_frames)() = nullptr;            // _PyThread_CurrentFrames: {ident: frame}, new reference
  PyObject* (*sys_object)(const char*) = nullptr;     // PySys_GetObject: borrowed
  PyObject* (*call)(PyObject*, PyObject*) = nullptr;  // PyObject_CallObject: new reference
  PyObject* (*get_attr)(PyObject*, const char*) = nullptr;               // new reference
  PyObject* (*dict_get)(PyObject*, PyObject*) = nullptr;                 // PyDict_GetItem: borrowed, no error set
  PyObject* (*dict_get_string)(PyObject*, const char*) = nullptr;        // PyDict_GetItemString: the same
  int (*dict_next)(PyObject*, long*, PyObject**, PyObject**) = nullptr;  // borrowed
  unsigned long (*as_unsigned_long)(PyObject*) = nullptr;
  long long (*as_long_long)(PyObject*) = nullptr;
  const char* (*utf8)(PyObject*) = nullptr;
  void (*incref)(PyObject*) = nullptr;
  void (*decref)(PyObject*) = nullptr;
  void (*clear_error)() = nullptr;
  // What the step builtins (StepBuiltins.h) need.
  PyObject* (*new_function)(void* definition, PyObject* self, PyObject* module) = nullptr;  // PyCFunction_NewEx
  PyObject* (*build_value)(const char* format, ...) = nullptr;  // Py_BuildValue: new reference
  PyObject* (*bool_from_long)(long) = nullptr;                  // new reference
  PyObject* (*error_occurred)() = nullptr;                      // borrowed
  // What reading stacks without the GIL (PythonMemory.h) adds.
  const unsigned long* version = nullptr;      // Py_Version (3.11+): 0xMMmmPPRS
  const void* code_type = nullptr;             // &PyCode_Type
  int (*code_line)(PyObject*, int) = nullptr;  // PyCode_Addr2Line: code, byte offset; with the GIL

  // What reading the calling thread's own stack needs.
  [[nodiscard]] bool canReadOwnStack() const {
    return gil_check && get_frame && frame_back && frame_code && frame_line && get_attr && utf8 && decref &&
           clear_error;
  }
  // What reading every thread's stack from a thread of the collector needs.
  [[nodiscard]] bool canSampleThreads() const {
    return canReadOwnStack() && is_initialized && is_finalizing && main_interpreter && thread_state_new &&
           thread_state_clear && thread_state_delete_current && restore_thread && save_thread &&
           (current_frames || call) && sys_object && dict_get && dict_get_string && dict_next && as_unsigned_long &&
           as_long_long && incref;
  }
  // What reading stacks without the GIL needs beside canSampleThreads.
  [[nodiscard]] bool canSampleWithoutGil() const { return version && code_type && code_line; }
};

// Looked up once, on first use.
[[nodiscard]] const PythonApi& pythonApi();

// {thread ident: innermost frame} of every thread that runs Python (sys._current_frames()), a new reference;
// null on failure (the error is cleared). Needs the GIL.
[[nodiscard]] PyObject* currentFramesOfAllThreads(const PythonApi& py);

// object.name as UTF-8 text, "" when it has none or it is not text (the error is cleared). Needs the GIL.
[[nodiscard]] std::string textAttribute(const PythonApi& py, PyObject* object, const char* name);

}  // namespace torchscope::collector
