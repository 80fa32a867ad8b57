// What `fix` and `demo` both hand to the compiler: where this installation keeps the collector
// library, the compiler's Python package and the torchscope executable (for `advise`).
#pragma once

#include "Commands.h"
#include "torchscope/compiler/Experiment.h"

namespace torchscope::cli {

inline void locateFixTools(compiler::FixOptions& options) {
  const Installation& paths = installation();
  options.collector_library = paths.collector_library;
  options.compiler_python_dir = paths.compiler_python_dir;
  options.torchscope_executable = paths.executable_dir + "/torchscope";
}

}  // namespace torchscope::cli
