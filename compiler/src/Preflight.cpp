// `fix` checks what its runs need before it spends the first one: a job that cannot start, or a rewrite tool that
// cannot load, would otherwise show only after a whole baseline run.
#include <fmt/format.h>

#include <algorithm>

#include "Runner.h"
#include "torchscope/base/Settings.h"
#include "torchscope/compiler/Process.h"

namespace torchscope::compiler {
namespace fs = std::filesystem;

namespace {

// The last line of an interpreter's stderr ("ModuleNotFoundError: No module named 'libcst'").
std::string lastLine(const std::string& text) {
  const auto end = text.find_last_not_of("\n\r ");
  if (end == std::string::npos) return "no output";
  const auto start = text.find_last_of('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

struct Probe {
  bool ok = false;
  std::string why;  // what failed, when not ok
};

Probe probe(ProcessSpec spec, const fs::path& stderr_path) {
  spec.stderr_path = stderr_path.string();
  spec.timeout = std::chrono::seconds(300);
  auto process = runProcess(spec);
  if (!process) return {false, process.error().message};
  if (process->timed_out) return {false, "did not answer within 300 s"};
  if (process->exit_code != 0) return {false, lastLine(readTextFile(spec.stderr_path))};
  return {true, ""};
}

}  // namespace

Result<void> Runner::preflight() {
  const fs::path folder = temp_root_ / "preflight";
  std::error_code error;
  fs::create_directories(folder, error);
  if (error)
    return makeError(ErrorCode::kIo,
                     fmt::format("fix cannot write its runs under {}: {}", folder.string(), error.message()));

  // The job's interpreter, as the runs start it: torch and the launcher (found on PYTHONPATH) must import.
  ProcessSpec job;
  job.argv.push_back(job_.python);
  job.argv.insert(job.argv.end(), job_.python_options.begin(), job_.python_options.end());
  job.argv.insert(job.argv.end(), {"-c", "import torch, torchscope_compiler.launch"});
  job.working_directory = job_.working_directory.string();
  job.environment["PYTHONPATH"] = pythonPath();
  if (const Probe started = probe(job, folder / "job.stderr"); !started.ok) {
    return makeError(ErrorCode::kInvalidArgument,
                     fmt::format("the job's Python `{}` cannot run the job under fix (import torch, "
                                 "torchscope_compiler.launch): {}",
                                 job_.python, started.why));
  }

  // The rewrite runs in torchscope's environment when it has LibCST, else in the job's; never inside the job.
  std::vector<std::string> candidates = options_.tool_pythons;
  candidates.push_back(job_.python);
  std::vector<std::string> tried;
  std::vector<std::string> failures;
  for (const std::string& python : candidates) {
    if (python.empty() || std::find(tried.begin(), tried.end(), python) != tried.end()) continue;
    ProcessSpec tool;
    tool.argv = {python, "-c", "import libcst, torchscope_compiler.rewrite"};
    tool.environment["PYTHONPATH"] = pythonPath();
    const Probe loaded = probe(tool, folder / "rewrite.stderr");
    if (loaded.ok) {
      tool_python_ = python;
      return {};
    }
    tried.push_back(python);
    failures.push_back(python + " (" + loaded.why + ")");
  }
  std::string list;
  for (const auto& entry : failures) list += (list.empty() ? "" : "; ") + entry;
  return makeError(ErrorCode::kInvalidArgument,
                   fmt::format("no Python can run fix's source rewrite (LibCST): tried {}. Install it into "
                               "torchscope's environment (pip install libcst) or set {} to a Python that has it",
                               list, base::settings::kPython.name));
}

}  // namespace torchscope::compiler
