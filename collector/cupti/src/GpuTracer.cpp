// The process's one GPU tracer: CUPTI's buffer callbacks decode into the store, the Callback API
// turns blocking calls into located Sync rows.
//
// Locking: g_lifetime (shared) is held by a CUPTI callback while it uses the tracer; stop takes it
// exclusively only to unpublish, after the final cuptiActivityFlushAll. g_control orders start,
// stop and flush and is never held across a CUPTI flush. A forked child checks g_in_fork_child
// before any lock, since a parent thread may have held one at fork().
#include "torchscope/cupti/GpuTracer.h"

#include <atomic>
#include <mutex>
#include <shared_mutex>

#include "BufferBudget.h"
#include "Tracer.h"

namespace torchscope::cupti {
namespace {

std::atomic<bool> g_in_fork_child{false};
std::shared_mutex g_lifetime;
std::atomic<Tracer*> g_tracer{nullptr};
std::mutex g_control;
std::unique_ptr<Tracer> g_owned;  // guarded by g_control
GpuTracingStats g_last_stats;     // of the last stopped tracer; guarded by g_control

void CUPTIAPI onBufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *max_records = 0;
  if (g_in_fork_child.load()) {
    *buffer = nullptr;
    *size = 0;
    return;
  }
  *buffer = bufferBudget().acquire(size);
}

void CUPTIAPI onBufferCompleted(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer, std::size_t size,
                                std::size_t valid_bytes) {
  if (!g_in_fork_child.load()) {
    std::shared_lock lock(g_lifetime);
    if (Tracer* tracer = g_tracer.load()) tracer->consumeBuffer(context, stream_id, buffer, valid_bytes);
  }
  bufferBudget().release(buffer, size);
}

void CUPTIAPI onApiCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (g_in_fork_child.load() || domain != CUPTI_CB_DOMAIN_RUNTIME_API || data == nullptr) return;
  std::shared_lock lock(g_lifetime);
  if (Tracer* tracer = g_tracer.load()) tracer->onRuntimeCallback(cbid, *static_cast<const CUpti_CallbackData*>(data));
}

void publish(Tracer* tracer) {
  std::unique_lock lock(g_lifetime);
  g_tracer.store(tracer);
}

}  // namespace

Result<void> startGpuTracingWith(std::shared_ptr<CuptiApi> api, store::Writer& writer,
                                 const GpuTracingOptions& options, SourceLocator locator) {
  if (g_in_fork_child.load()) return makeError(ErrorCode::kUnsupported, "GPU tracing is off in a forked child");
  std::lock_guard control(g_control);
  if (g_owned) return makeError(ErrorCode::kInvalidArgument, "GPU tracing is already on");
  bufferBudget().configure(options.max_buffer_bytes, options.buffer_bytes);
  auto tracer = std::make_unique<Tracer>(std::move(api), writer, options, locator);
  auto started = tracer->attach(TracerCallbacks{&onBufferRequested, &onBufferCompleted, &onApiCallback});
  if (!started) {
    tracer->finish();
    writer.add(store::Diagnostic{"cupti", "warning", started.error().message, 1});
    return started;
  }
  // Published before any kind is enabled, so that no completed buffer finds the tracer missing.
  publish(tracer.get());
  auto enabled = tracer->enable();
  if (!enabled) {
    publish(nullptr);
    tracer->detach();
    tracer->finish();
    writer.add(store::Diagnostic{"cupti", "warning", enabled.error().message, 1});
    return enabled;
  }
  g_owned = std::move(tracer);
  return {};
}

Result<void> startGpuTracing(store::Writer& writer, const GpuTracingOptions& options, SourceLocator locator) {
  auto api = loadCupti();
  if (!api) {
    writer.add(store::Diagnostic{"cupti", "info", api.error().message, 1});
    return api.error();
  }
  return startGpuTracingWith(std::shared_ptr<CuptiApi>(std::move(api.value())), writer, options, locator);
}

void flushGpuTracing() {
  if (g_in_fork_child.load()) return;
  std::shared_ptr<CuptiApi> api;
  {
    std::lock_guard control(g_control);
    if (!g_owned) return;
    api = g_owned->api();
  }
  api->flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard control(g_control);
  if (g_owned) g_owned->emitDropCounts();
}

void setGpuTracingCapture(bool capturing) {
  if (g_in_fork_child.load()) return;
  std::lock_guard control(g_control);
  if (g_owned) g_owned->setCapturing(capturing);
}

void stopGpuTracing() {
  if (g_in_fork_child.load()) return;
  std::unique_ptr<Tracer> tracer;
  {
    std::lock_guard control(g_control);
    tracer = std::move(g_owned);
  }
  if (!tracer) return;
  tracer->detach();
  tracer->api()->flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  publish(nullptr);  // waits for callbacks still using the tracer
  tracer->finish();
  std::lock_guard control(g_control);
  g_last_stats = tracer->stats();
  g_last_stats.active = false;
}

void gpuTracingAtForkChild() {
  g_in_fork_child.store(true);
  // The parent's tracer may be in use by a thread that does not exist here: leave it alone.
  g_tracer.store(nullptr);
  (void)g_owned.release();
}

GpuTracingStats gpuTracingStats() {
  GpuTracingStats stats;
  if (!g_in_fork_child.load()) {
    std::lock_guard control(g_control);
    stats = g_owned ? g_owned->stats() : g_last_stats;
  }
  const auto& budget = bufferBudget();
  stats.buffers_refused = budget.refused();
  stats.buffer_bytes_in_use = budget.inUse();
  stats.buffer_bytes_peak = budget.peak();
  return stats;
}

}  // namespace torchscope::cupti
