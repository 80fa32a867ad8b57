#include "Gpu.h"

#if TORCHSCOPE_HAVE_CUPTI
#include <dlfcn.h>

#include "Collector.h"
#include "PythonFrames.h"
#include "torchscope/base/Clock.h"
#include "torchscope/cupti/GpuTracing.h"
#endif

namespace torchscope::collector {

#if TORCHSCOPE_HAVE_CUPTI

namespace {

// Called by the CUPTI backend on the thread that made a blocking CUDA call.
bool locatePythonCaller(cupti::SourceLocation* out) {
  if (out == nullptr) return false;
  try {
    std::vector<store::SourceFrame> frames;
    for (PythonFrame& frame : currentUserFrames()) {
      frames.push_back({std::move(frame.file), frame.line, std::move(frame.function)});
    }
    if (frames.empty()) return false;
    // The user's own line when the bridge said which files are theirs; the innermost frame otherwise.
    const store::SourceFrame* user = store::innermostUserFrame(frames, Collector::instance().codeRoots());
    const store::SourceFrame& site = user != nullptr ? *user : frames.back();
    out->file = site.file;
    out->line = site.line;
    out->function = site.function;
    out->stack_json = store::stackJson(frames);
    return true;
  } catch (...) {
    return false;
  }
}

// cudaProfilerStart/Stop, from CUPTI's callback on the thread that called it.
void onProfilerRange(bool start) {
  try {
    Collector::instance().window().profilerRange(start, base::monotonicNow());
  } catch (...) {
  }
}

}  // namespace

bool startGpuTracingFor(store::Writer& writer, bool python, bool capturing, bool profiler_range, std::string* failure) {
  cupti::GpuTracingOptions options;
  options.capture_at_start = capturing;
  options.profiler_range = profiler_range ? &onProfilerRange : nullptr;
  auto started = cupti::startGpuTracing(writer, options, python ? &locatePythonCaller : nullptr);
  if (started) return true;
  if (failure != nullptr) *failure = started.error().message;
  return false;
}

void setGpuCapture(bool capturing) { cupti::setGpuTracingCapture(capturing); }
void flushGpuTracingNow() { cupti::flushGpuTracing(); }
void stopGpuTracingNow() { cupti::stopGpuTracing(); }
void gpuTracingForgetInChild() { cupti::gpuTracingAtForkChild(); }

#else

bool startGpuTracingFor(store::Writer& /*writer*/, bool /*python*/, bool /*capturing*/, bool /*profiler_range*/,
                        std::string* failure) {
  if (failure != nullptr) failure->clear();
  return false;
}
void setGpuCapture(bool /*capturing*/) {}
void flushGpuTracingNow() {}
void stopGpuTracingNow() {}
void gpuTracingForgetInChild() {}

#endif

}  // namespace torchscope::collector
