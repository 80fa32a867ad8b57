#include "StepFunction.h"

#include <cstdint>

#include "Collector.h"

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

// -1 with `failed` set when `object` is not an int that fits.
std::int64_t integerArgument(const PythonApi& py, PyObject* object, bool& failed) {
  const long long value = py.as_long_long(object);
  if (value == -1 && py.error_occurred() != nullptr) {
    py.clear_error();
    failed = true;
  }
  return value;
}

PyObject* recordStep(PyObject* /*self*/, PyObject* const* arguments, Py_ssize_t count) {
  const PythonApi& py = pythonApi();
  bool stored = false;
  try {
    bool failed = count != 4;
    if (!failed) {
      const std::int64_t index = integerArgument(py, arguments[0], failed);
      const std::int64_t start_ns = integerArgument(py, arguments[1], failed);
      const std::int64_t end_ns = integerArgument(py, arguments[2], failed);
      const char* source = py.bytes_data(arguments[3]);
      if (source == nullptr) py.clear_error();
      stored = !failed && source != nullptr && Collector::instance().recordStep(index, start_ns, end_ns, source);
    }
  } catch (...) {
    stored = false;
  }
  return py.bool_from_long(stored ? 1 : 0);
}

MethodDefinition step_definition{"record_step", &recordStep, kFastCall,
                                 "record_step(index, start_ns, end_ns, source) -> bool: the collector keeps one step"};

}  // namespace

PyObject* newStepFunction() {
  const PythonApi& py = pythonApi();
  if (py.new_function == nullptr || py.as_long_long == nullptr || py.bytes_data == nullptr ||
      py.bool_from_long == nullptr || py.error_occurred == nullptr || py.clear_error == nullptr) {
    return nullptr;
  }
  return py.new_function(&step_definition, nullptr, nullptr);
}

}  // namespace torchscope::collector
