// What `fix` and `demo` both hand to the compiler: where this installation keeps the collector
// library, the compiler's Python package and the torchscope executable (for `advise`).
#pragma once

#include "Commands.h"
#include "LiveStatus.h"
#include "torchscope/compiler/Experiment.h"

namespace torchscope::cli {

inline void locateFixTools(compiler::FixOptions& options) {
  const Installation& paths = installation();
  options.collector_library = paths.collector_library;
  options.compiler_python_dir = paths.compiler_python_dir;
  options.torchscope_executable = paths.executable_dir + "/torchscope";
  // The rewrite's LibCST: torchscope's environment ($TORCHSCOPE_PYTHON, the venv it is installed in, the Python it
  // was built with), then the job's (Runner::preflight).
  if (paths.python != "python3") options.tool_pythons.push_back(paths.python);
  if (!paths.build_python.empty()) options.tool_pythons.push_back(paths.build_python);
}

// Progress lines ("torchscope fix: ...") to `out`, and each run live on the status line while it runs.
inline void watchRuns(compiler::FixOptions& options, LiveStatus& status, std::ostream& out) {
  options.progress = [&status, &out](const std::string& line) { status.print(out, "torchscope fix: " + line); };
  options.on_run = [&status](const std::string& label, const std::string& store, bool running) {
    if (running) {
      status.watch(label, store);
    } else {
      status.forget(label);
    }
  };
}

}  // namespace torchscope::cli
