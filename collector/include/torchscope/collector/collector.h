/* The collector's C ABI: the only symbols libtorchscope_collector.so exports.
 *
 * The library is loaded into a user's job with LD_PRELOAD (or CUDA_INJECTION64_PATH) and owns
 * one store per process. The Python bridge (collector/python) calls these functions through
 * ctypes to hand over what it sees inside the interpreter.
 *
 * Error contract: no function throws or aborts; each one catches everything at this boundary.
 * Functions returning int return 0 on success and -1 when the record was not taken (no store
 * open in this process, malformed input, or an internal error); the job is never affected.
 */
#ifndef TORCHSCOPE_COLLECTOR_COLLECTOR_H
#define TORCHSCOPE_COLLECTOR_COLLECTOR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this process writes a store, 0 otherwise. */
int torchscope_is_active(void);

/* Path of this process's store, "" when none is open. The pointer stays valid until exit. */
const char* torchscope_store_path(void);

/* One record as a JSON object. kind is one of:
 *   "compile"     fields of store::Compile (times: start_ns, end_ns, dynamo_ns, aot_ns, inductor_ns)
 *   "graph_break" fields of store::GraphBreak (hints and user_stack as JSON arrays)
 *   "recompile"   fields of store::Recompile; guard_failures is a JSON array of raw guard texts;
 *                 cause and limit_hit are derived here (store::classifyRecompile,
 *                 store::isRecompileLimitHit over guard_failures and an optional "message")
 *   "sync"        fields of store::Sync
 *   "diagnostic"  {"severity", "message"}; the source is "bridge"
 *   "run"         any of python_version, torch_version, cuda_version, driver_version, gpu_name
 *   "attribute"   {"key", "value"}
 *   "device"      fields of store::Device
 *   "memory"      {"ts_ns", "step", "device", "values": {series: value}}: memory_samples rows of one
 *                 device at one time (the CUDA allocator at a step end)
 *   "memory_holder" fields of store::MemoryHolder (stack as a JSON array)
 *   "collective"  a cpu_ops row of category "collective": name, start_ns, end_ns, tid (the calling
 *                 thread, default the caller), args (JSON object: backend, op, bytes, ...)
 *   "compiled_region" a cpu_ops row of category "compiled_region" (one region's calls in one step), the
 *                 same fields; args as docs/FORMAT.md describes
 *   "cudagraphs"  a cpu_ops row of category "cudagraphs" (a compile's CUDA-graph outcome), the same fields
 * Missing fields keep the defaults of Records.h; pid and tid are filled in here. */
int torchscope_record_json(const char* kind, const char* json);

/* One training step on the calling thread; source is "optimizer", "zero_grad", "backward", "marker" or "nvtx". Also
 * records the process's host memory at the step end (host.rss, host.rss_peak) unless TORCHSCOPE_MEMORY=0. Returns -1
 * when the step is outside the capture window (not stored: the caller skips its own per-step work too). */
int torchscope_record_step(int64_t index, int64_t start_ns, int64_t end_ns, const char* source);

/* The Python bridge's step marking, as a tuple of Python builtins (optimizer_stepped, zero_grad, backward, marker,
 * next_step_index, follow_up_from, reset_after_fork; collector/src/StepBuiltins.h): the step's state is kept here and
 * each step end is one builtin call rather than Python code, which runs cold after a step's kernels. A new reference
 * (a PyObject*), NULL when the interpreter lacks the API it needs; call it with the GIL held (ctypes.PyDLL). */
void* torchscope_step_builtins(void);

/* The bridge finished its start-up in this interpreter. Installs SIGTERM/SIGINT handlers that
 * flush the store (only now, so that Python's own SIGINT handling is in place first). */
void torchscope_bridge_started(void);

/* Starts this process's stack sampler (TORCHSCOPE_SAMPLE_HZ, 100 when unset; 0: none): the bridge calls it once the
 * interpreter runs and again in a fork() child. Does nothing when one runs already, or without a store. */
void torchscope_sampler_start(void);

/* Stops the stack sampler and writes its last samples: the bridge calls it from an atexit handler, before the
 * interpreter finalises, and with the GIL released (ctypes.CDLL). Safe to call twice. */
void torchscope_sampler_stop(void);

/* 1 while the capture window is open (always, without one): steps, syncs, collectives, memory and GPU records are
 * kept only then (docs/collector.md, *Capture window*). */
int torchscope_window_open(void);

/* The job replaced the handler of the window's toggle signal (SIGUSR2): put the window's back in front, chaining to
 * the job's, so that both run. Does nothing without a signal window. */
void torchscope_window_rechain_signal(void);

/* Commits everything recorded so far. */
void torchscope_flush(void);

/* The job is about to start a tool that needs CUPTI for itself (torch.profiler with CUDA activities): stop GPU
 * tracing now, flushing what was traced, so that the tool gets CUPTI whole. `reason` ("the job started
 * torch.profiler at train.py:12") goes into a warning diagnostic and one stderr line. Returns 1 when tracing was
 * stopped, 0 when it was not on. */
int torchscope_gpu_handover(const char* reason);

/* The process is about to end without running exit handlers (Python re-raising SIGINT after an
 * uncaught KeyboardInterrupt): close the store now, recording exit_code (128+n for signal n). */
void torchscope_finish(int exit_code);

/* Entry point for CUDA_INJECTION64_PATH: initialises the collector if LD_PRELOAD did not. */
int InitializeInjection(void);

#ifdef __cplusplus
}
#endif

#endif /* TORCHSCOPE_COLLECTOR_COLLECTOR_H */
