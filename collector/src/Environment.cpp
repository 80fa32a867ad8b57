#include "Environment.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "torchscope/store/RunFolder.h"

namespace torchscope::collector {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kUnset = "<unset>";

std::string executableName() {
  std::error_code error;
  return fs::read_symlink("/proc/self/exe", error).filename().string();
}

// The bridge directory: TORCHSCOPE_BRIDGE_DIR, else share/torchscope/python beside the library's lib/ folder
// (an install, a wheel's environment, and the build tree all have it there).
std::string bridgeDirectory() {
  std::error_code error;
  if (std::string dir = settingString(settings::kBridgeDir); !dir.empty() && fs::is_directory(dir, error)) return dir;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&bridgeDirectory), &info) != 0 && info.dli_fname != nullptr) {
    const fs::path installed = fs::path(info.dli_fname).parent_path().parent_path() / TORCHSCOPE_LAYOUT_DATADIR / "python";
    if (fs::is_directory(installed, error)) return installed.string();
  }
  return "";
}

}  // namespace

std::string envString(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::string settingString(const base::Setting& setting) { return base::settingText(setting); }

bool settingOn(const base::Setting& setting) { return base::readFlag(setting).value; }

std::int64_t settingInteger(const base::Setting& setting) {
  const auto read = base::readInteger(setting);
  if (!read.warning.empty()) {
    const std::string line = "torchscope: " + read.warning + "\n";
    (void)!write(STDERR_FILENO, line.data(), line.size());
  }
  return read.value;
}

bool isPythonProcess() {
  if (dlsym(RTLD_DEFAULT, "Py_BytesMain") != nullptr || dlsym(RTLD_DEFAULT, "Py_Main") != nullptr) return true;
  return executableName().rfind("python", 0) == 0;
}

void claimJobEnvironment() {
  const std::string root_pid(settings::kRootPid.name);
  const std::string output_name(settings::kOutput.name);
  if (!base::settingIsSet(settings::kRootPid)) setenv(root_pid.c_str(), std::to_string(getpid()).c_str(), 1);
  std::string output = settingString(settings::kOutput);
  if (output.empty()) output = "torchscope-" + settingString(settings::kRootPid) + ".db";
  std::error_code error;
  // A run folder: every process's store goes inside it (ranks may start on other hosts first).
  if (output.back() == '/' || fs::is_directory(output, error)) {
    fs::create_directories(output, error);
    output = (fs::path(output) / store::kRunFolderStoreName).string();
  }
  const fs::path absolute = fs::absolute(output, error);
  setenv(output_name.c_str(), (error ? output : absolute.lexically_normal().string()).c_str(), 1);
}

std::string requestedOutput() { return settingString(settings::kOutput); }

void prepareBridgePath() {
  const std::string bridge = bridgeDirectory();
  if (bridge.empty()) return;
  const char* current = std::getenv("PYTHONPATH");
  const std::string original = current != nullptr ? current : "";
  // A parent outside Python may have prepended it already.
  if (original == bridge || original.rfind(bridge + ":", 0) == 0) return;
  setenv(std::string(settings::kSavedPythonPath.name).c_str(),
         current != nullptr ? current : std::string(kUnset).c_str(), 1);
  setenv(std::string(settings::kBridgeDir.name).c_str(), bridge.c_str(), 1);
  const std::string combined = original.empty() ? bridge : bridge + ":" + original;
  setenv("PYTHONPATH", combined.c_str(), 1);
}

}  // namespace torchscope::collector
