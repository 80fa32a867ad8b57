// The bridge's step marking as Python builtins made with the interpreter's C API (no ctypes call): the step end runs
// once per training step, right after the step's kernels have pushed the interpreter's code and data out of the
// caches, where a cold ctypes call cost 11-17 us and each Python call about 1 us; the whole end of a step is one
// builtin call here (docs/performance.md, *Collector*). The GIL stays with the caller.
#pragma once

#include "PythonApi.h"

namespace torchscope::collector {

// A tuple of builtins over this process's StepMarks (StepMarks.h), each recording the step it ends
// (Collector::recordStep):
//   optimizer_stepped(optimizer_id), zero_grad(optimizer_id), backward(), marker()
//       -> None, or (index, start_ns, end_ns, stored) when a step ended and the bridge's follow-up is due for it;
//          zero_grad() and backward() answer False once their kind can never mark again (the bridge unhooks them)
//   request(start_ns, items, marked) -> as above, for the request held before this one (StepMarks::request);
//       False once requests can never be steps in this process
//   flush_request() -> as above, for the last request held (at exit)
//   request_items() -> str: "first_index:items,..." of the requests recorded
//   next_step_index() -> int
//   follow_up_from(index, outside_window: bool) -> None: step ends before `index` answer None, and so do those
//       outside the capture window unless `outside_window`
//   reset_after_fork() -> None: a fork() child's marks start afresh
// Arguments of the wrong kind mark nothing and raise nothing. A new reference; null when this interpreter lacks the
// API it needs. Called with the GIL held.
[[nodiscard]] PyObject* newStepBuiltins();

}  // namespace torchscope::collector
