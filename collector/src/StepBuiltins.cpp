#include "StepBuiltins.h"

#include <cstdint>
#include <optional>
#include <string>

#include "Collector.h"
#include "StepMarks.h"
#include "torchscope/base/Clock.h"

namespace torchscope::collector {

namespace {

using Py_ssize_t = std::intptr_t;
using FastFunction = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t);

// CPython's PyMethodDef, whose layout is part of the stable ABI.
struct MethodDefinition {
  const char* name;
  FastFunction function;
  int flags;
  const char* doc;
};
constexpr int kFastCall = 0x0080;  // METH_FASTCALL: arguments as an array, no tuple built per call

StepMarks& marks() {
  static StepMarks process_marks;  // never destroyed before the interpreter: the bridge calls in up to its exit
  return process_marks;
}

PyObject* none() { return pythonApi().build_value(""); }

// The one argument as an integer; nullopt (the error cleared) for anything else.
std::optional<std::int64_t> integerArgument(PyObject* const* arguments, Py_ssize_t count) {
  const PythonApi& py = pythonApi();
  if (count != 1) return std::nullopt;
  const long long value = py.as_long_long(arguments[0]);
  if (value == -1 && py.error_occurred() != nullptr) {
    py.clear_error();
    return std::nullopt;
  }
  return value;
}

// Records the step, and tells the bridge about it when its follow-up is due.
PyObject* ended(const std::optional<EndedStep>& step) {
  if (!step) return none();
  const bool stored = Collector::instance().recordStep(step->index, step->start_ns, step->end_ns, step->source);
  if (!marks().followUpDue(step->index, stored)) return none();
  const PythonApi& py = pythonApi();
  return py.build_value("(LLLN)", static_cast<long long>(step->index), static_cast<long long>(step->start_ns),
                        static_cast<long long>(step->end_ns), py.bool_from_long(stored ? 1 : 0));
}

using CanMark = bool (StepMarks::*)() const;

// The step an event ended, as ended() answers it; False instead of None when events of its kind (`can_mark`) can
// never end a step again in this process, so that the bridge takes its wrapper out of torch.
PyObject* answer(const std::optional<EndedStep>& step, CanMark can_mark) {
  if (!step && can_mark != nullptr && !(marks().*can_mark)()) return pythonApi().bool_from_long(0);
  return ended(step);
}

// optimizer_stepped(optimizer_id) and zero_grad(optimizer_id): `mark` is the StepMarks event.
template <std::optional<EndedStep> (StepMarks::*mark)(StepMarks::OptimizerId, std::int64_t), CanMark can_mark>
PyObject* optimizerEvent(PyObject* /*self*/, PyObject* const* arguments, Py_ssize_t count) {
  try {
    const std::optional<std::int64_t> optimizer = integerArgument(arguments, count);
    if (!optimizer) return none();
    return answer((marks().*mark)(static_cast<StepMarks::OptimizerId>(*optimizer), base::monotonicNow()), can_mark);
  } catch (...) {
    return none();
  }
}

// backward() and marker().
template <std::optional<EndedStep> (StepMarks::*mark)(std::int64_t), CanMark can_mark>
PyObject* loopEvent(PyObject* /*self*/, PyObject* const* /*arguments*/, Py_ssize_t /*count*/) {
  try {
    return answer((marks().*mark)(base::monotonicNow()), can_mark);
  } catch (...) {
    return none();
  }
}

// request(start_ns, items, marked): a request's call returned.
PyObject* requestEnded(PyObject* /*self*/, PyObject* const* arguments, Py_ssize_t count) {
  try {
    const std::int64_t now_ns = base::monotonicNow();
    if (count != 3) return none();
    const std::optional<std::int64_t> start_ns = integerArgument(arguments, 1);
    const std::optional<std::int64_t> items = integerArgument(arguments + 1, 1);
    const std::optional<std::int64_t> marked = integerArgument(arguments + 2, 1);
    if (!start_ns || !items || !marked) return none();
    return answer(marks().request(*start_ns, now_ns, *items, *marked != 0), &StepMarks::requestCanMark);
  } catch (...) {
    return none();
  }
}

PyObject* flushRequest(PyObject* /*self*/, PyObject* const* /*arguments*/, Py_ssize_t /*count*/) {
  try {
    return ended(marks().flushRequest());
  } catch (...) {
    return none();
  }
}

// "first_index:items,..." (docs/FORMAT.md, *Run attributes*, `requests.items`).
PyObject* requestItems(PyObject* /*self*/, PyObject* const* /*arguments*/, Py_ssize_t /*count*/) {
  try {
    std::string text;
    for (const RequestItems& run : marks().requestItems()) {
      if (!text.empty()) text += ',';
      text += std::to_string(run.first_index) + ':' + std::to_string(run.items);
    }
    return pythonApi().build_value("s", text.c_str());
  } catch (...) {
    return none();
  }
}

PyObject* nextStepIndex(PyObject* /*self*/, PyObject* const* /*arguments*/, Py_ssize_t /*count*/) {
  return pythonApi().build_value("L", static_cast<long long>(marks().nextIndex()));
}

PyObject* followUpFrom(PyObject* /*self*/, PyObject* const* arguments, Py_ssize_t count) {
  const std::optional<std::int64_t> index = count == 2 ? integerArgument(arguments, 1) : std::nullopt;
  const std::optional<std::int64_t> outside_window = count == 2 ? integerArgument(arguments + 1, 1) : std::nullopt;
  if (index && outside_window) marks().followUpFrom(*index, *outside_window != 0);
  return none();
}

PyObject* resetAfterFork(PyObject* /*self*/, PyObject* const* /*arguments*/, Py_ssize_t /*count*/) {
  marks().reset();
  return none();
}

MethodDefinition definitions[] = {
    {"optimizer_stepped", &optimizerEvent<&StepMarks::optimizerStepped, nullptr>, kFastCall,
     "optimizer_stepped(optimizer_id): an optimizer's step() ended"},
    {"zero_grad", &optimizerEvent<&StepMarks::zeroGrad, &StepMarks::zeroGradCanMark>, kFastCall,
     "zero_grad(optimizer_id): an optimizer's zero_grad() was called (False: zero_grad() no longer marks)"},
    {"backward", &loopEvent<&StepMarks::backward, &StepMarks::backwardCanMark>, kFastCall,
     "backward(): a backward() outside compiled code returned (False: backward() no longer marks)"},
    {"marker", &loopEvent<&StepMarks::marker, nullptr>, kFastCall, "marker(): torchscope.step()"},
    {"request", &requestEnded, kFastCall,
     "request(start_ns, items, marked): a request returned (False: requests are no steps in this process)"},
    {"flush_request", &flushRequest, kFastCall, "flush_request(): at exit, the request held until the next one"},
    {"request_items", &requestItems, kFastCall, "request_items() -> str: 'first_index:items,...' of the requests"},
    {"next_step_index", &nextStepIndex, kFastCall, "next_step_index() -> int: the steps ended so far"},
    {"follow_up_from", &followUpFrom, kFastCall,
     "follow_up_from(index, outside_window): step ends from index on answer their step (outside the window too)"},
    {"reset_after_fork", &resetAfterFork, kFastCall, "reset_after_fork(): a fork() child's steps start afresh"},
};

}  // namespace

PyObject* newStepBuiltins() {
  const PythonApi& py = pythonApi();
  if (py.new_function == nullptr || py.as_long_long == nullptr || py.build_value == nullptr ||
      py.bool_from_long == nullptr || py.error_occurred == nullptr || py.clear_error == nullptr ||
      py.decref == nullptr) {
    return nullptr;
  }
  PyObject* functions[std::size(definitions)] = {};
  for (std::size_t i = 0; i < std::size(definitions); ++i) {
    functions[i] = py.new_function(&definitions[i], nullptr, nullptr);
    if (functions[i] == nullptr) {
      for (std::size_t made = 0; made < i; ++made) py.decref(functions[made]);
      py.clear_error();
      return nullptr;
    }
  }
  static_assert(std::size(definitions) == 10);
  // "N" hands each reference over to the tuple (or drops it when the tuple cannot be made).
  PyObject* tuple = py.build_value("(NNNNNNNNNN)", functions[0], functions[1], functions[2], functions[3], functions[4],
                                   functions[5], functions[6], functions[7], functions[8], functions[9]);
  if (tuple == nullptr) py.clear_error();
  return tuple;
}

}  // namespace torchscope::collector
