/* The offsets of the fields the stack sampler reads without the GIL, from CPython's own internal headers (compiled
 * only where they are installed): PythonLayoutTest.cpp compares them with the reader's table (PythonMemory.h). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <stddef.h>
#include <string.h>

#include "PythonLayoutProbe.h"

struct ProbedLayout probedLayout(void) {
  struct ProbedLayout layout;
  layout.version_hex = PY_VERSION_HEX;
  layout.interp_threads_head = offsetof(PyInterpreterState, threads.head);
  layout.tstate_next = offsetof(PyThreadState, next);
  layout.tstate_cframe = offsetof(PyThreadState, cframe);
  layout.tstate_thread_id = offsetof(PyThreadState, thread_id);
  layout.tstate_native_id = offsetof(PyThreadState, native_thread_id);
  layout.cframe_current_frame = offsetof(_PyCFrame, current_frame);
  layout.frame_code = offsetof(_PyInterpreterFrame, f_code);
  layout.frame_previous = offsetof(_PyInterpreterFrame, previous);
  layout.frame_prev_instr = offsetof(_PyInterpreterFrame, prev_instr);
  layout.frame_owner = offsetof(_PyInterpreterFrame, owner);
  layout.code_size = offsetof(PyVarObject, ob_size);
  layout.code_first_traceable = offsetof(PyCodeObject, _co_firsttraceable);
  layout.code_adaptive = offsetof(PyCodeObject, co_code_adaptive);
  layout.owned_by_generator = FRAME_OWNED_BY_GENERATOR;
  layout.code_unit_size = sizeof(_Py_CODEUNIT);
  layout.first_traceable_size = sizeof(((PyCodeObject*)0)->_co_firsttraceable);
  layout.size_size = sizeof(((PyVarObject*)0)->ob_size);
  layout.object_type = offsetof(PyObject, ob_type);
  layout.code_filename = offsetof(PyCodeObject, co_filename);
  layout.code_name = offsetof(PyCodeObject, co_name);
  layout.code_line_table = offsetof(PyCodeObject, co_linetable);
  layout.code_first_line = offsetof(PyCodeObject, co_firstlineno);
  layout.text_length = offsetof(PyASCIIObject, length);
  layout.text_state = offsetof(PyASCIIObject, state);
  layout.ascii_data = sizeof(PyASCIIObject);
  PyASCIIObject text;
  memset(&text, 0, sizeof(text));
  text.state.compact = 1;
  text.state.ascii = 1;
  text.state.ready = 1;
  memcpy(&layout.text_compact_ascii_ready, &text.state, sizeof(unsigned));
  layout.bytes_size = offsetof(PyVarObject, ob_size);
  layout.bytes_data = offsetof(PyBytesObject, ob_sval);
  return layout;
}
