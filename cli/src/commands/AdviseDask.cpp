// Starts the Dask driver of `advise --dask` (collector/python/torchscope/dask_advise.py, installed under
// share/torchscope/python/torchscope) with torchscope's Python: $TORCHSCOPE_PYTHON, the python3 beside torchscope
// (a venv), the Python of the build tree, else python3 on PATH. The driver checks Dask and says how to install it.
#include "AdviseDask.h"

#include <unistd.h>

#include <fmt/format.h>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "Commands.h"
#include "torchscope/base/Settings.h"

namespace torchscope::cli {

void startDaskAdvise(const DaskRequest& request) {
  const Installation& paths = installation();
  const std::string python =
      paths.python == "python3" && !paths.build_python.empty() ? paths.build_python : paths.python;
  const std::string driver = (std::filesystem::path(paths.source_dir) / "python/torchscope/dask_advise.py").string();
  std::error_code missing;
  if (!std::filesystem::exists(driver, missing)) {
    fail(kExitFailure, "the Dask driver of this installation is missing (" + driver + "): reinstall torchscope");
  }
  std::vector<std::string> arguments = {python,         driver,
                                        "--torchscope", paths.executable_dir + "/torchscope",
                                        "--timeout",    fmt::format("{}", request.timeout_s),
                                        "--format",     request.format};
  if (!request.scheduler.empty()) arguments.insert(arguments.end(), {"--scheduler", request.scheduler});
  if (request.workers > 0) arguments.insert(arguments.end(), {"--workers", std::to_string(request.workers)});
  if (!request.output.empty()) arguments.insert(arguments.end(), {"--output", request.output});
  for (const auto& root : request.user_code) arguments.insert(arguments.end(), {"--user-code", root});
  if (request.absolute_paths) arguments.emplace_back("--absolute-paths");
  arguments.emplace_back("--");
  arguments.insert(arguments.end(), request.stores.begin(), request.stores.end());
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  fail(kExitFailure, fmt::format("cannot start the Dask driver with {}: {} (set {} to the Python that "
                                 "has `pip install \"torchscope[dask]\"`)",
                                 python, std::strerror(errno), base::settings::kPython.name));
}

}  // namespace torchscope::cli
