#include "torchscope/cupti/ApiCatalog.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace torchscope::cupti {
namespace {

constexpr auto kNoisyRuntime = std::to_array<CUpti_CallbackId>({
    CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPointerGetAttributes_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_ptsz_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v12030,
});

constexpr auto kNoisyDriver = std::to_array<CUpti_CallbackId>({
    CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion,        CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,           CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes,    CUPTI_DRIVER_TRACE_CBID_cuGetErrorString,
    CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState, CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing,
    CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing_ptsz,  CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,       CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice_v2,
});

constexpr auto kDriverLaunch = std::to_array<CUpti_CallbackId>({
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
});

struct BlockingEntry {
  CUpti_CallbackId cbid;
  BlockingCall call;
};

constexpr std::array kBlocking = {
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, {"stream", "cudaStreamSynchronize"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000, {"stream", "cudaStreamSynchronize"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, {"device", "cudaDeviceSynchronize"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, {"event", "cudaEventSynchronize"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, {"memcpy", "cudaMemcpy"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000, {"memcpy", "cudaMemcpy"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_v3020, {"memcpy", "cudaMemcpy2D"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_ptds_v7000, {"memcpy", "cudaMemcpy2D"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3D_v3020, {"memcpy", "cudaMemcpy3D"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3D_ptds_v7000, {"memcpy", "cudaMemcpy3D"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_v3020, {"memcpy", "cudaMemcpyToSymbol"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_ptds_v7000, {"memcpy", "cudaMemcpyToSymbol"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbol_v3020, {"memcpy", "cudaMemcpyFromSymbol"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbol_ptds_v7000, {"memcpy", "cudaMemcpyFromSymbol"}},
    BlockingEntry{CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000, {"memcpy", "cudaMemcpyPeer"}},
};

constexpr std::array<CUpti_CallbackId, kBlocking.size()> blockingIds() {
  std::array<CUpti_CallbackId, kBlocking.size()> ids{};
  for (std::size_t i = 0; i < kBlocking.size(); ++i) ids[i] = kBlocking[i].cbid;
  return ids;
}
constexpr auto kBlockingIds = blockingIds();

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::span<const CUpti_CallbackId> noisyRuntimeApis() { return kNoisyRuntime; }

bool isNoisyRuntimeApi(CUpti_CallbackId cbid) {
  return std::find(kNoisyRuntime.begin(), kNoisyRuntime.end(), cbid) != kNoisyRuntime.end();
}

std::span<const CUpti_CallbackId> noisyDriverApis() { return kNoisyDriver; }

bool isNoisyDriverApi(CUpti_CallbackId cbid) {
  return std::find(kNoisyDriver.begin(), kNoisyDriver.end(), cbid) != kNoisyDriver.end();
}

std::span<const CUpti_CallbackId> driverLaunchApis() { return kDriverLaunch; }

bool isDriverLaunchApi(CUpti_CallbackId cbid) {
  return std::find(kDriverLaunch.begin(), kDriverLaunch.end(), cbid) != kDriverLaunch.end();
}

std::span<const CUpti_CallbackId> blockingRuntimeApis() { return kBlockingIds; }

std::optional<BlockingCall> blockingRuntimeCall(CUpti_CallbackId cbid) {
  for (const auto& entry : kBlocking) {
    if (entry.cbid == cbid) return entry.call;
  }
  return std::nullopt;
}

std::string plainApiName(std::string name) {
  // Trailing "_v<digits>" first, then the per-thread default stream variants.
  if (const auto pos = name.rfind("_v"); pos != std::string::npos && pos + 2 < name.size() &&
                                          std::all_of(name.begin() + static_cast<long>(pos) + 2, name.end(),
                                                      [](unsigned char c) { return std::isdigit(c) != 0; })) {
    name.resize(pos);
  }
  for (const char* suffix : {"_ptsz", "_ptds"}) {
    if (endsWith(name, suffix)) name.resize(name.size() - 5);
  }
  return name;
}

}  // namespace torchscope::cupti
