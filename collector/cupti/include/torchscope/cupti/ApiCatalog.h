// Which CUDA API calls the tracer treats specially: noise that is not stored, and the blocking
// calls whose caller is located.
#pragma once

#include <cupti.h>

#include <optional>
#include <span>
#include <string>

namespace torchscope::cupti {

// Runtime calls made so often and so cheaply that storing them only costs space (cudaGetDevice...).
[[nodiscard]] std::span<const CUpti_CallbackId> noisyRuntimeApis();
[[nodiscard]] bool isNoisyRuntimeApi(CUpti_CallbackId cbid);
[[nodiscard]] std::span<const CUpti_CallbackId> noisyDriverApis();
[[nodiscard]] bool isNoisyDriverApi(CUpti_CallbackId cbid);
// The driver calls that launch work (cuLaunchKernel, cuLaunchKernelEx, cuGraphLaunch...): Triton's kernels, and so
// torch.compile's and AOTInductor's on a GPU, are launched through them, not through cudaLaunchKernel.
[[nodiscard]] std::span<const CUpti_CallbackId> driverLaunchApis();
[[nodiscard]] bool isDriverLaunchApi(CUpti_CallbackId cbid);

// A runtime call that blocks the host until the GPU has caught up.
struct BlockingCall {
  const char* sync_kind;  // store::Sync::sync_kind: "stream" | "device" | "event" | "memcpy"
  const char* op;         // the call's name without version suffix
};
[[nodiscard]] std::span<const CUpti_CallbackId> blockingRuntimeApis();
[[nodiscard]] std::optional<BlockingCall> blockingRuntimeCall(CUpti_CallbackId cbid);

// "cudaStreamSynchronize_ptsz_v7000" -> "cudaStreamSynchronize": CUPTI's names carry version and
// per-thread-stream suffixes that only split one call into several names.
[[nodiscard]] std::string plainApiName(std::string name);

}  // namespace torchscope::cupti
