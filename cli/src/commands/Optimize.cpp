// torchscope optimize MODEL --input SHAPE...: parsed here, run by torchscope-optimize (libtorch).
//
// torchscope-optimize carries no path to a libtorch: it runs on the libtorch inside the torch of the Python that runs
// the job (installation().python), whose torch/lib folder goes first on LD_LIBRARY_PATH. libtorch's C++ ABI changes
// between releases, so that torch must be the release the tool was built against.
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <sstream>

#include "Commands.h"
#include "tools/OptimizeArguments.h"
#include "torchscope/base/Settings.h"
#include "torchscope/compiler/Process.h"

namespace torchscope::cli {

#ifdef TORCHSCOPE_OPTIMIZE_TORCH_VERSION  // configured with libtorch
namespace {

namespace fs = std::filesystem;

// Prints torch's lib folder and its release without importing torch (which takes seconds).
constexpr const char* kFindTorch =
    "import importlib.metadata, importlib.util, os\n"
    "spec = importlib.util.find_spec('torch')\n"
    "print(os.path.join(spec.submodule_search_locations[0], 'lib') if spec else '')\n"
    "print(importlib.metadata.version('torch') if spec else '')\n";

struct JobTorch {
  std::string library_dir;
  std::string version;  // without a local part: "2.13.0" for "2.13.0+cpu"
};

JobTorch findJobTorch(const std::string& python) {
  const fs::path output = fs::temp_directory_path() / ("torchscope-optimize-torch-" + std::to_string(getpid()));
  compiler::ProcessSpec spec;
  spec.argv = {python, "-c", kFindTorch};
  spec.stdout_path = output.string();
  spec.timeout = std::chrono::seconds(60);
  const auto result = compiler::runProcess(spec);
  std::istringstream lines(compiler::readTextFile(output.string()));
  std::error_code ignored;
  fs::remove(output, ignored);
  if (!result) fail(kExitFailure, "cannot run " + python + " to find its torch: " + result.error().message);
  JobTorch torch;
  std::getline(lines, torch.library_dir);
  std::getline(lines, torch.version);
  torch.version = torch.version.substr(0, torch.version.find('+'));
  if (result->exit_code != 0 || torch.library_dir.empty()) {
    fail(kExitFailure, "optimize runs on the libtorch of the job's torch, and " + python + " has no torch (set " +
                           std::string(base::settings::kPython.name) + " to the Python that runs the job)");
  }
  return torch;
}

}  // namespace
#endif

void addOptimizeCommand(CLI::App& app) {
  auto arguments = std::make_shared<OptimizeArguments>();
  auto* cmd = app.add_subcommand("optimize", std::string(kOptimizeDescription) + " (runs torchscope-optimize)");
  cmd->footer("libtorch is the one of the torch that $" + std::string(base::settings::kPython.name) +
              " imports (default: the python3 beside torchscope, else python3 on PATH); it must be the torch release "
              "torchscope-optimize was built with.");
  declareOptimizeOptions(*cmd, *arguments);
  // The callback owns the parsed values: CLI11 writes into them while it parses.
  cmd->callback([arguments] {
    Tool tool{"torchscope-optimize",
              "it needs libtorch; build it with `cmake --build <build dir> --target torchscope-optimize` "
              "(configured with -DTORCHSCOPE_WITH_LIBTORCH=ON and torch importable by the build's Python)",
              ""};
#ifdef TORCHSCOPE_OPTIMIZE_TORCH_VERSION
    (void)findTool(tool);  // a missing tool says what to build before anything asks for torch
    const std::string python = installation().python;
    const JobTorch torch = findJobTorch(python);
    if (torch.version != TORCHSCOPE_OPTIMIZE_TORCH_VERSION) {
      fail(kExitFailure, "torchscope-optimize was built against torch " TORCHSCOPE_OPTIMIZE_TORCH_VERSION ", but " +
                             python + " has torch " + torch.version + " (set " +
                             std::string(base::settings::kPython.name) +
                             " to a Python with that torch, or rebuild torchscope-optimize)");
    }
    tool.library_dir = torch.library_dir;
#endif
    startTool(tool);
  });
}

}  // namespace torchscope::cli
