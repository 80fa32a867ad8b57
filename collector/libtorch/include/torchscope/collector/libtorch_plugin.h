/* The collector's libtorch plugin: libtorchscope_libtorch.so, linked with libtorch, which the collector loads into a
 * native program (no Python) that has libtorch loaded when it starts, such as a C++ server running an AOTInductor
 * package. The collector itself links no libtorch: it is loaded into every process of a job.
 *
 * The plugin records requests and the operators of one of them through the collector's own C ABI (collector.h),
 * handed over here so that it needs no symbol of the collector's to be global. docs/collector.md, *Native programs*.
 */
#ifndef TORCHSCOPE_COLLECTOR_LIBTORCH_PLUGIN_H
#define TORCHSCOPE_COLLECTOR_LIBTORCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The file name the collector looks for beside itself. */
#define TORCHSCOPE_LIBTORCH_PLUGIN_FILE "libtorchscope_libtorch.so"
/* The plugin's one entry point, looked up with dlsym. */
#define TORCHSCOPE_LIBTORCH_ATTACH "torchscope_libtorch_attach"

typedef struct TorchscopeCollectorApi {
  int (*record_json)(const char* table, const char* json);
  int (*record_step)(int64_t index, int64_t start_ns, int64_t end_ns, const char* source);
  /* A diagnostic of source "libtorch"; severity "info" or "warning". */
  void (*diagnostic)(const char* severity, const char* message);
} TorchscopeCollectorApi;

/* Starts recording in this process. Returns 0 when attached; otherwise -1 with the reason in `why` (the loaded
 * libtorch is another release than the plugin's, the program calls no entry point the plugin knows). Never throws. */
int torchscope_libtorch_attach(const TorchscopeCollectorApi* collector, char* why, size_t why_size);

#ifdef __cplusplus
}
#endif

#endif /* TORCHSCOPE_COLLECTOR_LIBTORCH_PLUGIN_H */
