#include "LibtorchRelease.h"

#include <fstream>

namespace torchscope::collector::libtorch {

namespace fs = std::filesystem;

std::string releaseBeside(const fs::path& library) {
  const fs::path root = library.parent_path().parent_path();
  std::ifstream build_version(root / "build-version");
  std::string line;
  if (build_version && std::getline(build_version, line)) return line;
  std::ifstream version_py(root / "version.py");
  while (version_py && std::getline(version_py, line)) {
    const auto quote = line.find('\'');
    if (line.rfind("__version__", 0) == 0 && quote != std::string::npos) {
      return line.substr(quote + 1, line.find('\'', quote + 1) - quote - 1);
    }
  }
  return "";
}

std::string libtorchMismatch(const std::string& loaded, const std::string& built_release) {
  const std::string release = releaseBeside(loaded);
  const auto withoutLocal = [](const std::string& version) { return version.substr(0, version.find('+')); };
  if (!release.empty() && withoutLocal(release) == withoutLocal(built_release)) return "";
  return "the program's libtorch (" + loaded + ", release " + (release.empty() ? "unknown" : release) +
         ") is not of the release this plugin was built for (" + built_release + ")";
}

}  // namespace torchscope::collector::libtorch
