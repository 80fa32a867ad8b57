// The plugin's entry point: checks that the program's libtorch is of the release the plugin was built for, then routes
// the program's calls of run() and boxed_run() of AOTIModelPackageLoader and AOTIModelContainerRunner through timed
// copies (CallRedirect.h) and installs the RecordFunction callbacks (Requests.h).
#include <ATen/Tensor.h>
#include <dlfcn.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
// TORCH_VERSION moved to the header-only part of torch; older releases (the plugin is also built against the
// torch of a lent GPU machine, scripts/gpu_validation/build_libtorch_parts.sh) have it in torch/version.h.
#if __has_include(<torch/headeronly/version.h>)
#include <torch/headeronly/version.h>
#else
#include <torch/version.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "CallRedirect.h"
#include "LibtorchRelease.h"
#include "Requests.h"
#include "torchscope/collector/libtorch_plugin.h"

namespace torchscope::collector::libtorch {
namespace {

namespace fs = std::filesystem;
using Loader = torch::inductor::AOTIModelPackageLoader;
using Runner = torch::inductor::AOTIModelContainerRunner;
using Tensors = std::vector<at::Tensor>;

// The mangled names of the calls, for the signatures the static_asserts pin: a libtorch that changes one fails to
// build the plugin rather than being redirected to a function of another signature. The runner's are what a program
// calls on a model .so without a package (AOTIModelContainerRunnerCpu/Cuda), or through the loader's get_runner().
constexpr char kLoaderRun[] = "_ZN5torch8inductor22AOTIModelPackageLoader3runERKSt6vectorIN2at6TensorESaIS4_EEPv";
constexpr char kLoaderBoxedRun[] =
    "_ZN5torch8inductor22AOTIModelPackageLoader9boxed_runEOSt6vectorIN2at6TensorESaIS4_EEPv";
constexpr char kRunnerRun[] = "_ZN5torch8inductor24AOTIModelContainerRunner3runERKSt6vectorIN2at6TensorESaIS4_EEPv";
constexpr char kRunnerBoxedRun[] =
    "_ZN5torch8inductor24AOTIModelContainerRunner9boxed_runEOSt6vectorIN2at6TensorESaIS4_EEPv";
static_assert(std::is_same_v<decltype(&Loader::run), Tensors (Loader::*)(const Tensors&, void*)>);
static_assert(std::is_same_v<decltype(&Loader::boxed_run), Tensors (Loader::*)(Tensors&&, void*)>);
static_assert(std::is_same_v<decltype(&Runner::run), Tensors (Runner::*)(const Tensors&, void*)>);
static_assert(std::is_same_v<decltype(&Runner::boxed_run), Tensors (Runner::*)(Tensors&&, void*)>);

RequestRecorder* package_requests = nullptr;

std::int64_t batchItems(const Tensors& inputs) {
  if (inputs.empty() || !inputs.front().defined() || inputs.front().dim() == 0) return -1;
  return inputs.front().size(0);
}

struct Redirection {
  const char* symbol;
  void* replacement;
};

// The timed copies of one class's run() and boxed_run(). Neither is virtual, and a non-virtual member function is
// called as a function of `this` and its arguments (Itanium C++ ABI), so a replacement takes the object first and
// the slot holds a plain function.
template <typename Object>
struct TimedCalls {
  using Run = Tensors (*)(Object*, const Tensors&, void*);
  using BoxedRun = Tensors (*)(Object*, Tensors&&, void*);
  static inline const char* model = "";
  static inline Run real_run = nullptr;
  static inline BoxedRun real_boxed_run = nullptr;

  static Tensors timedRun(Object* object, const Tensors& inputs, void* stream) {
    const RequestRecorder::Scope request(*package_requests, batchItems(inputs), model);
    return real_run(object, inputs, stream);
  }
  static Tensors timedBoxedRun(Object* object, Tensors&& inputs, void* stream) {
    const RequestRecorder::Scope request(*package_requests, batchItems(inputs), model);
    return real_boxed_run(object, std::move(inputs), stream);
  }
  // Finds the real functions and adds the calls this libtorch has to `redirections`.
  static void add(const char* name, const char* run_symbol, const char* boxed_run_symbol,
                  std::vector<Redirection>& redirections) {
    model = name;
    real_run = reinterpret_cast<Run>(dlsym(RTLD_DEFAULT, run_symbol));
    real_boxed_run = reinterpret_cast<BoxedRun>(dlsym(RTLD_DEFAULT, boxed_run_symbol));
    if (real_run != nullptr) redirections.push_back({run_symbol, reinterpret_cast<void*>(&timedRun)});
    if (real_boxed_run != nullptr) redirections.push_back({boxed_run_symbol, reinterpret_cast<void*>(&timedBoxedRun)});
  }
};

std::string loadedLibrary(const void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "";
  std::error_code error;
  const fs::path path = fs::canonical(info.dli_fname, error);
  return error ? std::string(info.dli_fname) : path.string();
}

std::string programsLibtorch() { return loadedLibrary(reinterpret_cast<const void*>(&at::addGlobalCallback)); }

// Registered after the collector's own exit handler, so it runs before the store closes.
void writeItemsAtExit() {
  try {
    package_requests->writeItems();
  } catch (...) {
  }
}

void report(char* why, std::size_t size, const std::string& text) {
  if (why != nullptr && size > 0) std::snprintf(why, size, "%s", text.c_str());
}

}  // namespace
}  // namespace torchscope::collector::libtorch

extern "C" __attribute__((visibility("default"))) int torchscope_libtorch_attach(
    const TorchscopeCollectorApi* collector, char* why, size_t why_size) {
  using namespace torchscope::collector::libtorch;
  try {
    if (collector == nullptr || collector->record_json == nullptr || collector->record_step == nullptr ||
        collector->diagnostic == nullptr) {
      report(why, why_size, "no collector to record into");
      return -1;
    }
    if (package_requests != nullptr) return 0;  // attached already
    if (const std::string mismatch = libtorchMismatch(programsLibtorch(), TORCH_VERSION); !mismatch.empty()) {
      report(why, why_size, mismatch);
      return -1;
    }
    std::vector<Redirection> redirections;
    TimedCalls<Loader>::add("torch::inductor::AOTIModelPackageLoader", kLoaderRun, kLoaderBoxedRun, redirections);
    TimedCalls<Runner>::add("torch::inductor::AOTIModelContainerRunner", kRunnerRun, kRunnerBoxedRun, redirections);
    package_requests = new RequestRecorder(*collector);  // never freed: calls may run until the process ends
    package_requests->installCallbacks();
    std::atexit(&writeItemsAtExit);
    // The calls of the library that defines them (the loader's own call of its runner) and of this plugin stay as
    // they are.
    const std::vector<std::string> skip = {programsLibtorch(),
                                           loadedLibrary(reinterpret_cast<const void*>(&torchscope_libtorch_attach))};
    bool redirected_any = false;
    for (const Redirection& redirection : redirections) {
      const Redirected redirected = redirectCalls(redirection.symbol, redirection.replacement, skip);
      redirected_any = redirected_any || !redirected.objects.empty();
      for (const std::string& failure : redirected.failures) {
        collector->diagnostic("warning", ("AOTInductor package calls not timed in " + failure).c_str());
      }
    }
    if (!redirected_any) {
      collector->diagnostic("info",
                            "the program calls no run() or boxed_run() of AOTIModelPackageLoader or "
                            "AOTIModelContainerRunner (or calls them from a library it loaded later): its requests are "
                            "its RECORD_USER_SCOPE(\"torchscope.request\") blocks");
    }
    return 0;
  } catch (const std::exception& error) {
    report(why, why_size, error.what());
  } catch (...) {
    report(why, why_size, "an unknown error");
  }
  return -1;
}
