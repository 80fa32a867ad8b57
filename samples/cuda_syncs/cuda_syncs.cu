// Deliberately badly synchronised CUDA: each iteration launches tiny kernels, copies through
// pageable and pinned host memory, and blocks the host in every way CUDA offers. It prints the
// counts it produced so that a trace can be checked against them.
//
//   cuda_syncs [--iterations N] [--elements N] [--counts-json PATH]
// Exit codes: 0 done, 2 bad arguments, 77 no usable CUDA device, 1 a CUDA error.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

__global__ void scale(float* data, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

__global__ void addOne(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

struct Counts {
  long kernels = 0;
  long memcpys = 0;
  long pageable_memcpys = 0;
  long memsets = 0;
  long stream_syncs = 0;
  long device_syncs = 0;
  long event_syncs = 0;
  long blocking_memcpys = 0;
  long nvtx_ranges = 0;
};

bool check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "cuda_syncs: %s failed: %s\n", what, cudaGetErrorString(status));
  return false;
}

bool parseArguments(int argc, char** argv, long* iterations, int* elements, std::string* counts_json) {
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--iterations") == 0 && has_value) {
      *iterations = std::strtol(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--elements") == 0 && has_value) {
      *elements = static_cast<int>(std::strtol(argv[++i], nullptr, 10));
    } else if (std::strcmp(argv[i], "--counts-json") == 0 && has_value) {
      *counts_json = argv[++i];
    } else {
      return false;
    }
  }
  return *iterations > 0 && *elements > 0;
}

// One training-step-shaped iteration with every kind of stall.
bool iterate(float* device, float* pinned, std::vector<float>& pageable, int n, cudaStream_t stream,
             cudaEvent_t done, Counts& counts) {
  const size_t bytes = sizeof(float) * static_cast<size_t>(n);
  const int threads = 128;
  const int blocks = (n + threads - 1) / threads;
  nvtxRangePushA("iteration");
  ++counts.nvtx_ranges;

  // Blocking copy from pageable memory: the host waits for the GPU.
  if (!check(cudaMemcpy(device, pageable.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy HtoD")) return false;
  ++counts.memcpys, ++counts.pageable_memcpys, ++counts.blocking_memcpys;

  for (int k = 0; k < 4; ++k) {
    scale<<<blocks, threads, 0, stream>>>(device, n, 1.0001f);
    addOne<<<blocks, threads, 0, stream>>>(device, n);
    counts.kernels += 2;
  }
  // "Async" copy into pageable memory: staged, so it is not asynchronous at all.
  if (!check(cudaMemcpyAsync(pageable.data(), device, bytes, cudaMemcpyDeviceToHost, stream), "pageable async"))
    return false;
  ++counts.memcpys, ++counts.pageable_memcpys;
  if (!check(cudaStreamSynchronize(stream), "cudaStreamSynchronize")) return false;
  ++counts.stream_syncs;

  // A pinned copy done right, then an event wait.
  if (!check(cudaMemcpyAsync(pinned, device, bytes, cudaMemcpyDeviceToHost, stream), "pinned async")) return false;
  ++counts.memcpys;
  if (!check(cudaEventRecord(done, stream), "cudaEventRecord")) return false;
  if (!check(cudaEventSynchronize(done), "cudaEventSynchronize")) return false;
  ++counts.event_syncs;

  if (!check(cudaMemsetAsync(device, 0, bytes, stream), "cudaMemsetAsync")) return false;
  ++counts.memsets;
  scale<<<blocks, threads, 0, stream>>>(device, n, 2.0f);
  ++counts.kernels;
  nvtxMarkA("before device sync");
  if (!check(cudaDeviceSynchronize(), "cudaDeviceSynchronize")) return false;
  ++counts.device_syncs;
  nvtxRangePop();
  return check(cudaGetLastError(), "kernel launch");
}

void printCounts(const Counts& c, long iterations, FILE* out) {
  std::fprintf(out,
               "{\"iterations\": %ld, \"kernels\": %ld, \"memcpys\": %ld, \"pageable_memcpys\": %ld, "
               "\"memsets\": %ld, \"stream_syncs\": %ld, \"device_syncs\": %ld, \"event_syncs\": %ld, "
               "\"blocking_memcpys\": %ld, \"nvtx_ranges\": %ld}\n",
               iterations, c.kernels, c.memcpys, c.pageable_memcpys, c.memsets, c.stream_syncs, c.device_syncs,
               c.event_syncs, c.blocking_memcpys, c.nvtx_ranges);
}

}  // namespace

int main(int argc, char** argv) {
  long iterations = 20;
  int elements = 1 << 16;
  std::string counts_json;
  if (!parseArguments(argc, argv, &iterations, &elements, &counts_json)) {
    std::fprintf(stderr, "usage: cuda_syncs [--iterations N] [--elements N] [--counts-json PATH]\n");
    return 2;
  }
  int device_count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&device_count); status != cudaSuccess || device_count == 0) {
    std::fprintf(stderr, "cuda_syncs: no CUDA device (%s): nothing to run\n",
                 status == cudaSuccess ? "none found" : cudaGetErrorString(status));
    return 77;
  }

  const size_t bytes = sizeof(float) * static_cast<size_t>(elements);
  std::vector<float> pageable(static_cast<size_t>(elements), 1.0f);
  float* device = nullptr;
  float* pinned = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  if (!check(cudaMalloc(&device, bytes), "cudaMalloc") || !check(cudaMallocHost(&pinned, bytes), "cudaMallocHost") ||
      !check(cudaStreamCreate(&stream), "cudaStreamCreate") || !check(cudaEventCreate(&done), "cudaEventCreate")) {
    return 1;
  }
  Counts counts;
  bool ok = true;
  for (long i = 0; i < iterations && ok; ++i) ok = iterate(device, pinned, pageable, elements, stream, done, counts);
  cudaEventDestroy(done);
  cudaStreamDestroy(stream);
  cudaFreeHost(pinned);
  cudaFree(device);
  if (!ok) return 1;

  printCounts(counts, iterations, stdout);
  if (!counts_json.empty()) {
    FILE* out = std::fopen(counts_json.c_str(), "w");
    if (out == nullptr) {
      std::fprintf(stderr, "cuda_syncs: cannot write %s\n", counts_json.c_str());
      return 1;
    }
    printCounts(counts, iterations, out);
    std::fclose(out);
  }
  return 0;
}
