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

/* One record as a JSON object of the columns of the store table `table` declares (store/records/, docs/FORMAT.md):
 * "compiles", "graph_breaks", "recompiles", "syncs", "devices", "memory_samples", "memory_holders", "collectives",
 * "compiled_regions", "op_census", "run_attributes", "diagnostics" or "run" (fields of the one-row run table).
 * Missing columns keep the defaults of the declaration; pid, tid (unless given) and a missing end time are filled
 * in here, and: a recompile's cause and limit_hit are derived (store::classifyRecompileCause,
 * store::isRecompileLimitHit over guard_failures, a JSON array of raw guard texts, and an optional "message"); a
 * memory_samples object may carry "values": {series: value}, one row per series; a diagnostic's source is "bridge".
 * Records of the tables declared `windowed` are kept only while the capture window is open. Returns 0 when stored,
 * -1 otherwise (an unknown table, invalid JSON, a record outside the window). */
int torchscope_record_json(const char* table, const char* json);

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
