// The real CuptiApi: every CUPTI entry point resolved from libcupti with dlsym(), so that the
// collector links no CUDA library and a machine without a driver only sees start-up fail.
#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <utility>

#include "torchscope/base/Settings.h"
#include "torchscope/cupti/CuptiApi.h"

namespace torchscope::cupti {
namespace {

// One function pointer per CUPTI entry point the tracer needs.
struct CuptiSymbols {
  decltype(&cuptiActivityEnable) activity_enable = nullptr;
  decltype(&cuptiActivityDisable) activity_disable = nullptr;
  decltype(&cuptiActivityEnableRuntimeApi) activity_enable_runtime_api = nullptr;
  decltype(&cuptiActivityEnableDriverApi) activity_enable_driver_api = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) activity_register_callbacks = nullptr;
  decltype(&cuptiActivityGetNextRecord) activity_get_next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) activity_get_num_dropped_records = nullptr;
  decltype(&cuptiActivityFlushAll) activity_flush_all = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) activity_register_timestamp_callback = nullptr;
  decltype(&cuptiGetTimestamp) get_timestamp = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
  decltype(&cuptiGetCallbackName) get_callback_name = nullptr;
  decltype(&cuptiGetResultString) get_result_string = nullptr;
  decltype(&cuptiGetVersion) get_version = nullptr;
};

template <class Fn>
bool resolve(void* library, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(library, name));
  return out != nullptr;
}

// Returns the name of the first missing symbol, or nullptr when all resolved.
const char* resolveAll(void* library, CuptiSymbols& s) {
  const std::pair<bool, const char*> checks[] = {
      {resolve(library, "cuptiActivityEnable", s.activity_enable), "cuptiActivityEnable"},
      {resolve(library, "cuptiActivityDisable", s.activity_disable), "cuptiActivityDisable"},
      {resolve(library, "cuptiActivityEnableRuntimeApi", s.activity_enable_runtime_api),
       "cuptiActivityEnableRuntimeApi"},
      {resolve(library, "cuptiActivityEnableDriverApi", s.activity_enable_driver_api), "cuptiActivityEnableDriverApi"},
      {resolve(library, "cuptiActivityRegisterCallbacks", s.activity_register_callbacks),
       "cuptiActivityRegisterCallbacks"},
      {resolve(library, "cuptiActivityGetNextRecord", s.activity_get_next_record), "cuptiActivityGetNextRecord"},
      {resolve(library, "cuptiActivityGetNumDroppedRecords", s.activity_get_num_dropped_records),
       "cuptiActivityGetNumDroppedRecords"},
      {resolve(library, "cuptiActivityFlushAll", s.activity_flush_all), "cuptiActivityFlushAll"},
      {resolve(library, "cuptiActivityRegisterTimestampCallback", s.activity_register_timestamp_callback),
       "cuptiActivityRegisterTimestampCallback"},
      {resolve(library, "cuptiGetTimestamp", s.get_timestamp), "cuptiGetTimestamp"},
      {resolve(library, "cuptiSubscribe", s.subscribe), "cuptiSubscribe"},
      {resolve(library, "cuptiUnsubscribe", s.unsubscribe), "cuptiUnsubscribe"},
      {resolve(library, "cuptiEnableCallback", s.enable_callback), "cuptiEnableCallback"},
      {resolve(library, "cuptiGetCallbackName", s.get_callback_name), "cuptiGetCallbackName"},
      {resolve(library, "cuptiGetResultString", s.get_result_string), "cuptiGetResultString"},
      {resolve(library, "cuptiGetVersion", s.get_version), "cuptiGetVersion"},
  };
  for (const auto& [found, name] : checks) {
    if (!found) return name;
  }
  return nullptr;
}

std::string loadedPath(void* library, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

class DlopenCupti final : public CuptiApi {
 public:
  DlopenCupti(CuptiSymbols symbols, std::string path) : s_(symbols), path_(std::move(path)) {}

  CUptiResult enableActivity(CUpti_ActivityKind kind) override { return s_.activity_enable(kind); }
  CUptiResult disableActivity(CUpti_ActivityKind kind) override { return s_.activity_disable(kind); }
  CUptiResult enableRuntimeApiRecords(CUpti_CallbackId cbid, bool enable) override {
    return s_.activity_enable_runtime_api(cbid, enable ? 1 : 0);
  }
  CUptiResult enableDriverApiRecords(CUpti_CallbackId cbid, bool enable) override {
    return s_.activity_enable_driver_api(cbid, enable ? 1 : 0);
  }
  CUptiResult registerBufferCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                      CUpti_BuffersCallbackCompleteFunc completed) override {
    return s_.activity_register_callbacks(requested, completed);
  }
  CUptiResult nextRecord(std::uint8_t* buffer, std::size_t valid_bytes, CUpti_Activity** record) override {
    return s_.activity_get_next_record(buffer, valid_bytes, record);
  }
  CUptiResult droppedRecords(CUcontext context, std::uint32_t stream_id, std::size_t* dropped) override {
    return s_.activity_get_num_dropped_records(context, stream_id, dropped);
  }
  CUptiResult flushAll(std::uint32_t flags) override { return s_.activity_flush_all(flags); }
  CUptiResult registerTimestampCallback(CUpti_TimestampCallbackFunc clock) override {
    return s_.activity_register_timestamp_callback(clock);
  }
  CUptiResult timestamp(std::uint64_t* ns) override { return s_.get_timestamp(ns); }
  CUptiResult subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) override {
    return s_.subscribe(subscriber, callback, userdata);
  }
  CUptiResult unsubscribe(CUpti_SubscriberHandle subscriber) override { return s_.unsubscribe(subscriber); }
  CUptiResult enableCallback(bool enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                             CUpti_CallbackId cbid) override {
    return s_.enable_callback(enable ? 1 : 0, subscriber, domain, cbid);
  }
  CUptiResult callbackName(CUpti_CallbackDomain domain, std::uint32_t cbid, const char** name) override {
    return s_.get_callback_name(domain, cbid, name);
  }
  std::string resultText(CUptiResult result) override {
    const char* text = nullptr;
    if (s_.get_result_string(result, &text) == CUPTI_SUCCESS && text != nullptr) return text;
    return "CUPTI error " + std::to_string(static_cast<int>(result));
  }
  std::string libraryPath() const override { return path_; }

 private:
  CuptiSymbols s_;
  std::string path_;
};

}  // namespace

std::vector<std::string> cuptiLibraryCandidates() {
  std::vector<std::string> candidates;
  if (const std::string explicit_path = base::settingText(base::settings::kCuptiLibrary); !explicit_path.empty()) {
    candidates.emplace_back(explicit_path);
  }
  const std::string soname = "libcupti.so." + std::to_string(CUPTI_API_VERSION / 10000);
  candidates.push_back(soname);
  candidates.emplace_back("libcupti.so");
#ifdef TORCHSCOPE_CUPTI_LIBRARY_DIR
  candidates.push_back(std::string(TORCHSCOPE_CUPTI_LIBRARY_DIR) + "/" + soname);
#endif
  return candidates;
}

Result<std::unique_ptr<CuptiApi>> loadCuptiLibrary(const std::vector<std::string>& candidates) {
  std::string last_problem = "no candidate paths";
  for (const auto& candidate : candidates) {
    // RTLD_NODELETE: CUPTI keeps callbacks into its own code alive until the process ends.
    void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (library == nullptr) {
      const char* why = dlerror();
      last_problem = why ? why : candidate + ": cannot be loaded";
      continue;
    }
    CuptiSymbols symbols;
    if (const char* missing = resolveAll(library, symbols)) {
      last_problem = candidate + " lacks " + missing;
      dlclose(library);
      continue;
    }
    std::uint32_t version = 0;
    if (symbols.get_version(&version) != CUPTI_SUCCESS || version / 10000 != CUPTI_API_VERSION / 10000) {
      last_problem = candidate + " has CUPTI API version " + std::to_string(version) + ", built for " +
                     std::to_string(CUPTI_API_VERSION);
      dlclose(library);
      continue;
    }
    return std::unique_ptr<CuptiApi>(std::make_unique<DlopenCupti>(symbols, loadedPath(library, candidate)));
  }
  return makeError(ErrorCode::kUnsupported, "libcupti not usable (" + last_problem + "): GPU tracing off");
}

bool cudaDriverAvailable() {
  // Kept loaded (RTLD_NODELETE): CUDA uses it anyway, and unloading a driver library is not safe.
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);
  if (driver == nullptr) return false;
  dlclose(driver);
  return true;
}

Result<std::unique_ptr<CuptiApi>> loadCupti() {
  if (!cudaDriverAvailable()) return makeError(ErrorCode::kUnsupported, "no CUDA driver: GPU tracing off");
  return loadCuptiLibrary(cuptiLibraryCandidates());
}

}  // namespace torchscope::cupti
