#include "Libtorch.h"

#include <dlfcn.h>

#include <array>
#include <filesystem>

#include "Collector.h"
#include "torchscope/collector/collector.h"
#include "torchscope/collector/libtorch_plugin.h"

namespace torchscope::collector {
namespace {

void pluginDiagnostic(const char* severity, const char* message) {
  try {
    Collector::instance().diagnostic("libtorch", severity != nullptr ? severity : "info",
                                     message != nullptr ? message : "");
  } catch (...) {
  }
}

}  // namespace

bool libtorchLoaded() {
  void* handle = dlopen("libtorch_cpu.so", RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);  // RTLD_NOLOAD took a reference
  return true;
}

std::string attachLibtorchPlugin() {
  Dl_info self{};
  if (dladdr(reinterpret_cast<const void*>(&libtorchLoaded), &self) == 0 || self.dli_fname == nullptr) {
    return "the collector cannot find its own file";
  }
  const std::filesystem::path plugin =
      std::filesystem::path(self.dli_fname).parent_path() / TORCHSCOPE_LIBTORCH_PLUGIN_FILE;
  // Local: the plugin's symbols are for the collector alone; libtorch is the program's, already loaded.
  void* handle = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return plugin.string() + " does not load (" + (error != nullptr ? error : "no reason given") +
           "): torchscope was built without libtorch, or for another one";
  }
  using Attach = int (*)(const TorchscopeCollectorApi*, char*, size_t);
  auto attach = reinterpret_cast<Attach>(dlsym(handle, TORCHSCOPE_LIBTORCH_ATTACH));
  if (attach == nullptr) return plugin.string() + " has no " TORCHSCOPE_LIBTORCH_ATTACH;
  static const TorchscopeCollectorApi api{&torchscope_record_json, &torchscope_record_step, &pluginDiagnostic};
  std::array<char, 512> why{};
  if (attach(&api, why.data(), why.size()) != 0) return why.data();
  return "";  // the plugin stays loaded until the process ends
}

}  // namespace torchscope::collector
