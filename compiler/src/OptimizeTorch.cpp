// The libtorch half of `optimize`: every libtorch include of the project lives in this file.
#include <ATen/Parallel.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>

#include "torchscope/compiler/Optimize.h"

namespace torchscope::compiler {
namespace {

using Inputs = std::vector<torch::jit::IValue>;

struct Technique {
  std::string name;
  std::string note;
  double tolerance;
  std::function<torch::Tensor(const Inputs&)> forward;  // returns the first output tensor, float32
};

torch::Tensor firstTensor(const torch::jit::IValue& value) {
  if (value.isTensor()) return value.toTensor();
  if (value.isTuple()) {
    for (const auto& element : value.toTupleRef().elements()) {
      if (element.isTensor()) return element.toTensor();
    }
  }
  if (value.isList()) {
    for (const auto& element : value.toListRef()) {
      if (element.isTensor()) return element.toTensor();
    }
  }
  if (value.isGenericDict()) {
    for (const auto& entry : value.toGenericDict()) {
      if (entry.value().isTensor()) return entry.value().toTensor();
    }
  }
  throw std::runtime_error("the model returned no tensor");
}

Inputs convertInputs(const Inputs& inputs, const std::function<torch::Tensor(const torch::Tensor&)>& convert) {
  Inputs converted;
  for (const auto& input : inputs) converted.emplace_back(convert(input.toTensor()));
  return converted;
}

std::vector<Technique> techniques(torch::jit::Module& model, const Inputs& inputs) {
  std::vector<Technique> list;
  list.push_back({"baseline (eval, no_grad)", "model.eval() under torch::NoGradGuard", 0.0, [&model](const Inputs& in) {
                    torch::NoGradGuard no_grad;
                    return firstTensor(model.forward(in));
                  }});
  list.push_back({"inference-mode", "c10::InferenceMode", 1e-5, [&model](const Inputs& in) {
                    c10::InferenceMode guard;
                    return firstTensor(model.forward(in));
                  }});
  try {
    auto frozen = std::make_shared<torch::jit::Module>(torch::jit::freeze(model.clone()));
    auto optimized = std::make_shared<torch::jit::Module>(torch::jit::optimize_for_inference(*frozen));
    list.push_back({"freeze+optimize_for_inference", "torch::jit::freeze then optimize_for_inference", 1e-4,
                    [optimized](const Inputs& in) {
                      c10::InferenceMode guard;
                      return firstTensor(optimized->forward(in));
                    }});
  } catch (const std::exception& error) {
    // freeze refuses some models (e.g. ones that mutate attributes): reported as unavailable.
    const std::string reason = std::string(error.what()).substr(0, 200);
    list.push_back({"freeze+optimize_for_inference", reason, 1e-4,
                    [reason](const Inputs&) -> torch::Tensor { throw std::runtime_error(reason); }});
  }
  const bool image_input = std::all_of(inputs.begin(), inputs.end(), [](const auto& v) { return v.toTensor().dim() == 4; });
  if (image_input) {
    list.push_back({"channels-last", "4-d inputs in channels_last, inference mode", 1e-4, [&model](const Inputs& in) {
                      c10::InferenceMode guard;
                      const Inputs nhwc = convertInputs(
                          in, [](const torch::Tensor& t) { return t.contiguous(at::MemoryFormat::ChannelsLast); });
                      return firstTensor(model.forward(nhwc)).contiguous();
                    }});
  }
  auto bf16 = std::make_shared<torch::jit::Module>(model.clone());
  bf16->to(torch::kBFloat16);
  list.push_back({"bf16", "weights and inputs in bfloat16, inference mode", 5e-2, [bf16](const Inputs& in) {
                    c10::InferenceMode guard;
                    const Inputs half = convertInputs(in, [](const torch::Tensor& t) { return t.to(torch::kBFloat16); });
                    return firstTensor(bf16->forward(half)).to(torch::kFloat32);
                  }});
  return list;
}

double elapsedMs(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

Result<OptimizeReport> runOptimize(const OptimizeOptions& options) {
  if (options.input_shapes.empty()) return makeError(ErrorCode::kInvalidArgument, "optimize needs at least one --input SHAPE");
  if (options.rounds < 1 || options.iterations < 1) {
    return makeError(ErrorCode::kInvalidArgument, "--rounds and --iterations must be at least 1");
  }
  if (options.threads > 0) at::set_num_threads(options.threads);
  torch::jit::Module model;
  try {
    model = torch::jit::load(options.model_path);
  } catch (const std::exception& error) {
    return makeError(ErrorCode::kInvalidArgument, "cannot load '" + options.model_path +
                                                      "' as a TorchScript model: " + std::string(error.what()).substr(0, 200));
  }
  model.eval();
  torch::manual_seed(0);
  Inputs inputs;
  OptimizeReport report;
  report.model = options.model_path;
  report.rounds = options.rounds;
  report.iterations = options.iterations;
  for (const auto& shape : options.input_shapes) {
    inputs.emplace_back(torch::randn(shape));
    std::string text;
    for (const auto size : shape) text += (text.empty() ? "" : "x") + std::to_string(size);
    report.inputs += (report.inputs.empty() ? "" : ", ") + text;
  }
  torch::Tensor reference;
  try {
    torch::NoGradGuard no_grad;
    reference = firstTensor(model.forward(inputs)).to(torch::kFloat32);
  } catch (const std::exception& error) {
    return makeError(ErrorCode::kInvalidArgument,
                     "the model rejects inputs of shape " + report.inputs + ": " + std::string(error.what()).substr(0, 300));
  }

  std::vector<Technique> list;
  try {
    list = techniques(model, inputs);
  } catch (const std::exception& error) {
    return makeError(ErrorCode::kInvalidArgument, "cannot prepare the variants: " + std::string(error.what()).substr(0, 200));
  }
  std::vector<bool> usable(list.size(), true);
  for (std::size_t i = 0; i < list.size(); ++i) {
    OptimizeVariant variant;
    variant.name = list[i].name;
    variant.note = list[i].note;
    variant.tolerance = list[i].tolerance;
    try {
      for (int w = 0; w < options.warmup; ++w) (void)list[i].forward(inputs);
      const torch::Tensor output = list[i].forward(inputs).to(torch::kFloat32);
      const double scale = std::max(reference.abs().max().item<double>(), 1e-6);
      variant.max_abs_diff = output.sizes() == reference.sizes() ? (output - reference).abs().max().item<double>() : INFINITY;
      variant.max_rel_diff = variant.max_abs_diff / scale;
      variant.parity_ok = variant.max_rel_diff <= variant.tolerance;
    } catch (const std::exception& error) {
      variant.available = false;
      variant.note = std::string(error.what()).substr(0, 200);
      usable[i] = false;
    }
    report.variants.push_back(variant);
  }
  OptimizeVariant quantized;
  quantized.name = "int8 dynamic quantization";
  quantized.available = false;
  quantized.note = "quantize_dynamic is a Python API (torch.ao.quantization); libtorch offers no C++ entry point: "
                   "quantize in Python and pass the saved model";
  report.variants.push_back(quantized);

  // Interleaved rounds: every variant is timed once per round, so drifts hit all of them alike.
  std::vector<std::vector<std::vector<double>>> latencies(list.size());
  for (int round = 0; round < options.rounds; ++round) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!usable[i]) continue;
      std::vector<double> samples;
      for (int call = 0; call < options.iterations; ++call) {
        const auto started = std::chrono::steady_clock::now();
        (void)list[i].forward(inputs);
        samples.push_back(elapsedMs(started));
      }
      latencies[i].push_back(std::move(samples));
    }
  }
  // The unit of replication is a round: a variant's median latency in each round, the round-to-round
  // noise pooled over the variants (Statistics.h).
  std::vector<std::vector<double>> round_medians(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    for (const auto& samples : latencies[i]) round_medians[i].push_back(median(samples));
  }
  const LogNoise noise = pooledLogNoise(round_medians);
  for (std::size_t i = 0, v = 0; i < list.size(); ++i) {
    while (v < report.variants.size() && report.variants[v].name != list[i].name) ++v;
    if (v >= report.variants.size() || !usable[i]) continue;
    std::vector<double> pooled;
    for (const auto& samples : latencies[i]) pooled.insert(pooled.end(), samples.begin(), samples.end());
    auto& variant = report.variants[v];
    variant.latency_median_ms = median(pooled);
    variant.latency_p10_ms = quantile(pooled, 0.1);
    variant.latency_p90_ms = quantile(pooled, 0.9);
    variant.speedup = speedupInterval(round_medians[0], round_medians[i], noise);
  }
  return report;
}

}  // namespace torchscope::compiler
