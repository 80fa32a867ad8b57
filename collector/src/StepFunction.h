// The bridge's way to record a step: a Python builtin made with the interpreter's C API rather than a ctypes call.
// The step end runs once per training step, right after the step's kernels have pushed the ctypes/libffi path out
// of the caches: a cold ctypes call cost 11-17 us there where a builtin costs 2-3 us (docs/performance.md,
// *Collector*), and the GIL, which ctypes lets go and takes back, stays with the caller.
#pragma once

#include "PythonApi.h"

namespace torchscope::collector {

// record_step(index, start_ns, end_ns, source: bytes) -> bool, as torchscope_record_step (true: the step is stored);
// false, with no exception, for arguments of the wrong kind. A new reference; null when this interpreter lacks the
// API it needs. Called with the GIL held.
[[nodiscard]] PyObject* newStepFunction();

}  // namespace torchscope::collector
