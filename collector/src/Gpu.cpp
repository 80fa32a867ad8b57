#include "Gpu.h"

#if TORCHSCOPE_HAVE_CUPTI
#include <dlfcn.h>

#include <nlohmann/json.hpp>

#include "PythonFrames.h"
#include "torchscope/cupti/GpuTracing.h"
#endif

namespace torchscope::collector {

#if TORCHSCOPE_HAVE_CUPTI

namespace {

// Called by the CUPTI backend on the thread that made a blocking CUDA call.
bool locatePythonCaller(cupti::SourceLocation* out) {
  if (out == nullptr) return false;
  try {
    const std::vector<PythonFrame> frames = currentUserFrames();
    if (frames.empty()) return false;
    const PythonFrame& innermost = frames.back();
    out->file = innermost.file;
    out->line = innermost.line;
    out->function = innermost.function;
    nlohmann::json stack = nlohmann::json::array();
    for (const PythonFrame& frame : frames) {
      stack.push_back({{"file", frame.file}, {"line", frame.line}, {"function", frame.function}});
    }
    out->stack_json = stack.dump();
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace

bool startGpuTracingFor(store::Writer& writer, bool python, std::string* failure) {
  auto started = cupti::startGpuTracing(writer, cupti::GpuTracingOptions{}, python ? &locatePythonCaller : nullptr);
  if (started) return true;
  if (failure != nullptr) *failure = started.error().message;
  return false;
}

void flushGpuTracingNow() { cupti::flushGpuTracing(); }
void stopGpuTracingNow() { cupti::stopGpuTracing(); }
void gpuTracingForgetInChild() { cupti::gpuTracingAtForkChild(); }

#else

bool startGpuTracingFor(store::Writer& /*writer*/, bool /*python*/, std::string* failure) {
  if (failure != nullptr) failure->clear();
  return false;
}
void flushGpuTracingNow() {}
void stopGpuTracingNow() {}
void gpuTracingForgetInChild() {}

#endif

}  // namespace torchscope::collector
