// The catalogue of fix ids. A finding names the fix it proposes by one of these ids; the compiler
// module implements the fix under the same id. docs/rules.md lists them with what each one does.
// An empty fix id means no automatic fix exists: the finding's fix summary says what to do by hand.
#pragma once

#include <array>
#include <string_view>

namespace torchscope::analyzer::fix {

inline constexpr std::string_view kDynamicShapes = "dynamic-shapes";
inline constexpr std::string_view kTensorLr = "tensor-lr";
inline constexpr std::string_view kCaptureScalarOutputs = "capture-scalar-outputs";
inline constexpr std::string_view kCaptureDynamicOutputShapeOps = "capture-dynamic-output-shape-ops";
inline constexpr std::string_view kCompileMode = "compile-mode";
inline constexpr std::string_view kTf32 = "tf32";
inline constexpr std::string_view kBf16Autocast = "bf16-autocast";
inline constexpr std::string_view kInferenceMode = "inference-mode";
inline constexpr std::string_view kChannelsLast = "channels-last";
inline constexpr std::string_view kPinMemory = "pin-memory";
inline constexpr std::string_view kTorchCompile = "torch-compile";
inline constexpr std::string_view kRepeatInterleaveOutputSize = "repeat-interleave-output-size";
inline constexpr std::string_view kItemAccumulateTensor = "item-accumulate-tensor";
inline constexpr std::string_view kTupleKeysToStr = "tuple-keys-to-str";
inline constexpr std::string_view kPrintOutOfCompiled = "print-out-of-compiled";
inline constexpr std::string_view kSdpa = "sdpa";
inline constexpr std::string_view kQuantizeDynamic = "quantize-dynamic";
inline constexpr std::string_view kCudaGraphs = "cuda-graphs";
inline constexpr std::string_view kCacheCompile = "cache-compile";
inline constexpr std::string_view kRemoveDataDependentBranch = "remove-data-dependent-branch";
// The source form of capture-scalar-outputs for the `.item()` findings that propose it (compiler/Candidates.cpp).
inline constexpr std::string_view kItemKeptAsTensor = "item-kept-as-tensor";
// Not a remedy: compilation off, the eager baseline `advise --regions --against` measures compiled regions with.
inline constexpr std::string_view kEager = "eager";

inline constexpr std::array<std::string_view, 22> kAll = {
    kDynamicShapes,        kTensorLr,       kCaptureScalarOutputs, kCaptureDynamicOutputShapeOps,
    kCompileMode,          kTf32,           kBf16Autocast,         kInferenceMode,
    kChannelsLast,         kPinMemory,      kTorchCompile,         kRepeatInterleaveOutputSize,
    kItemAccumulateTensor, kTupleKeysToStr, kPrintOutOfCompiled,   kSdpa,
    kQuantizeDynamic,      kCudaGraphs,     kCacheCompile,         kRemoveDataDependentBranch,
    kItemKeptAsTensor,     kEager,
};

// How `torchscope fix` applies a fix: "runtime" (patched in at interpreter start, no file edited) or
// "source" (a code edit: a diff the compiler writes, or advice for a change by hand).
inline constexpr std::string_view kRuntime = "runtime";
inline constexpr std::string_view kSource = "source";

constexpr std::string_view kindOf(std::string_view id) {
  if (id.empty()) return "";
  if (id == kRepeatInterleaveOutputSize || id == kItemAccumulateTensor || id == kTupleKeysToStr ||
      id == kPrintOutOfCompiled || id == kSdpa || id == kRemoveDataDependentBranch || id == kItemKeptAsTensor) {
    return kSource;
  }
  return kRuntime;
}

}  // namespace torchscope::analyzer::fix
