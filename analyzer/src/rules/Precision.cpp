// precision/fp32-matmul: full-precision GEMMs on GPUs whose tensor cores would run them in TF32/bf16.
#include <fmt/format.h>

#include <map>

#include "../Rules.h"
#include "torchscope/analyzer/FixIds.h"

namespace torchscope::analyzer {

namespace {

constexpr std::int64_t kTf32ComputeMajor = 8;  // Ampere and newer run TF32 on tensor cores
constexpr double kMinimumShare = 0.05;         // of the device's kernel time
constexpr double kExpectedSaving = 0.5;        // TF32 at least halves a GEMM (peak ratio is 8x on A100)

// cuBLAS/CUTLASS name their kernels by precision: sgemm and f32f32 run on CUDA cores, tf32/s1688/bf16 on tensor cores.
bool isFp32Gemm(const std::string& kernel_name) {
  const std::string name = lowercase(kernel_name);
  if (!containsAny(name, {"gemm", "gemv", "convolve_sgemm"})) return false;
  if (containsAny(name, {"tf32", "s1688", "s16816", "tensorop", "h1688", "h16816", "h884", "s884", "bf16", "fp16",
                         "f16f16", "int8", "i8i8", "hmma", "e4m3", "e5m2"})) {
    return false;
  }
  return containsAny(name, {"sgemm", "f32f32", "fp32", "<float", "float,", "gemmsn"});
}

}  // namespace

Result<void> precisionRules(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  std::map<std::int64_t, double> device_seconds;
  std::map<std::int64_t, double> fp32_seconds;
  std::map<std::int64_t, std::int64_t> fp32_count;
  std::map<std::int64_t, std::vector<std::string>> examples;
  for (const auto& stat : facts.kernel_names) {
    device_seconds[stat.device] += stat.seconds;
    if (!isFp32Gemm(stat.name)) continue;
    fp32_seconds[stat.device] += stat.seconds;
    fp32_count[stat.device] += stat.count;
    if (examples[stat.device].size() < 5) examples[stat.device].push_back(stat.name);
  }
  for (const auto& [device, seconds] : fp32_seconds) {
    const auto major = facts.compute_major.find(device);
    if (major == facts.compute_major.end() || major->second < kTf32ComputeMajor) continue;
    const double share = seconds / std::max(device_seconds[device], 1e-12);
    if (share < kMinimumShare) continue;
    Finding finding = makeFinding(
        "precision/fp32-matmul", share >= 0.25 ? Severity::kWarning : Severity::kInfo,
        fmt::format("fp32 matrix multiplies take {} of GPU {}'s time", formatPercent(share), device),
        fmt::format("{} GEMM kernels ran in full fp32 on CUDA cores ({}), although GPU {} (compute capability {}) has "
                    "tensor cores. TF32 keeps fp32 storage and runs them several times faster; bf16 autocast{} goes "
                    "further.",
                    fp32_count[device], formatSeconds(seconds), device, major->second,
                    facts.training ? " (training)" : ""),
        {fix::kTf32, "torch.set_float32_matmul_precision(\"high\") (TF32), or bf16 autocast for more"});
    finding.count = fp32_count[device];
    setImpact(finding, facts, seconds * kExpectedSaving);
    setEvidence(finding, {{"device", device}, {"compute_major", major->second}, {"fp32_gemm_seconds", seconds},
                          {"share_of_gpu_time", share}, {"kernels", examples[device]}});
    out.push_back(std::move(finding));
  }
  return {};
}

}  // namespace torchscope::analyzer
