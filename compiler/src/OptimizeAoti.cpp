// `optimize` on an exported program or an AOTInductor package: the packages are loaded and run here with libtorch
// (torch::inductor::AOTIModelPackageLoader); the eager baseline runs in the Python worker of OptimizeHelpers. Like
// OptimizeTorch.cpp this file must not use fmt (libtorch ships its own fmt headers).
#include <ATen/Parallel.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/script.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>

#include "OptimizeHelpers.h"
#include "torchscope/compiler/Optimize.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;
using Tensors = std::vector<torch::Tensor>;

struct Candidate {
  OptimizeVariant result;
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader;
  std::function<torch::Tensor(const torch::Tensor&)> convert_input;  // from the float32 NCHW inputs the user has
};

// A scratch folder for the inputs and reference outputs, removed at the end whatever happens.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "torchscope-optimize-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string firstLine(const std::exception& error) {
  std::string text = error.what();
  return text.substr(0, std::min(text.find('\n'), std::size_t{300}));
}

// STEM.json and STEM.bin as aoti_program.write_raw writes them.
Tensors loadTensors(const fs::path& stem) {
  std::ifstream file(stem.string() + ".bin", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::ifstream index_file(stem.string() + ".json");
  const auto index = nlohmann::json::parse(index_file);
  static const std::map<std::string, torch::ScalarType> kTypes = {
      {"float32", torch::kFloat32},   {"float64", torch::kFloat64}, {"float16", torch::kFloat16},
      {"bfloat16", torch::kBFloat16}, {"int64", torch::kInt64},     {"int32", torch::kInt32},
      {"int16", torch::kInt16},       {"int8", torch::kInt8},       {"uint8", torch::kUInt8},
      {"bool", torch::kBool}};
  Tensors tensors;
  for (const auto& entry : index) {
    const auto type = kTypes.find(entry["dtype"].get<std::string>());
    if (type == kTypes.end()) throw std::runtime_error("an input of dtype " + entry["dtype"].get<std::string>());
    const auto shape = entry["shape"].get<std::vector<std::int64_t>>();
    const auto offset = entry["offset"].get<std::size_t>();
    auto tensor = torch::empty(shape, torch::TensorOptions().dtype(type->second));
    const std::size_t size = tensor.numel() * tensor.element_size();
    if (offset + size > bytes.size()) throw std::runtime_error("the tensor file is shorter than its index");
    std::memcpy(tensor.data_ptr(), bytes.data() + offset, size);
    tensors.push_back(tensor);
  }
  return tensors;
}

double tolerance(const std::string& variant) {
  if (variant == "int8") return 1.5e-1;  // activations rounded to 1/255 of their range: a few % is its normal
  if (variant == "bf16") return 5e-2;
  return 1e-4;
}

std::string describe(const std::string& variant) {
  if (variant == "aoti") return "AOTInductor package, default settings";
  if (variant == "aoti-max-autotune") {
    return "AOTInductor with max_autotune: on a CPU, Inductor's C++ GEMM template benchmarked against ATen per matmul";
  }
  if (variant == "bf16") return "weights and float inputs in bfloat16, re-exported, then AOTInductor";
  if (variant == "channels-last") return "module and 4-d inputs in channels_last, re-exported, then AOTInductor";
  if (variant == "int8") return "torchao PT2E dynamic int8 (X86InductorQuantizer), then AOTInductor with freezing";
  return variant;
}

std::function<torch::Tensor(const torch::Tensor&)> inputConversion(const std::string& variant) {
  if (variant == "bf16") {
    return [](const torch::Tensor& t) { return t.is_floating_point() ? t.to(torch::kBFloat16) : t; };
  }
  if (variant == "channels-last") {
    return [](const torch::Tensor& t) { return t.dim() == 4 ? t.contiguous(at::MemoryFormat::ChannelsLast) : t; };
  }
  return [](const torch::Tensor& t) { return t; };
}

Tensors runCandidate(Candidate& candidate, const Tensors& inputs) {
  c10::InferenceMode guard;
  Tensors converted;
  for (const auto& input : inputs) converted.push_back(candidate.convert_input(input));
  Tensors outputs = candidate.loader->run(converted);
  for (auto& output : outputs) output = output.to(torch::kFloat32).contiguous();
  return outputs;
}

void compareOutputs(const Tensors& outputs, const Tensors& reference, OptimizeVariant& variant) {
  double scale = 1e-6;
  variant.max_abs_diff = outputs.size() == reference.size() ? 0.0 : INFINITY;
  for (std::size_t i = 0; i < std::min(outputs.size(), reference.size()); ++i) {
    scale = std::max(scale, reference[i].abs().max().item<double>());
    variant.max_abs_diff = std::max(variant.max_abs_diff, outputs[i].sizes() == reference[i].sizes()
                                                              ? (outputs[i] - reference[i]).abs().max().item<double>()
                                                              : INFINITY);
  }
  if (std::isnan(variant.max_abs_diff)) variant.max_abs_diff = INFINITY;
  variant.max_rel_diff = variant.max_abs_diff / scale;
  variant.parity_ok = variant.max_rel_diff <= variant.tolerance;
  // Class scores: a 2-d first output of more than one column, whose arg-max per row is the prediction.
  if (!outputs.empty() && !reference.empty() && reference[0].dim() == 2 && reference[0].size(1) > 1 &&
      outputs[0].sizes() == reference[0].sizes()) {
    variant.top1_agreement = outputs[0].argmax(1).eq(reference[0].argmax(1)).to(torch::kFloat64).mean().item<double>();
  }
}

double callMs(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

std::string shapesText(const Tensors& inputs) {
  std::string text;
  for (const auto& input : inputs) {
    std::string shape;
    for (const auto size : input.sizes()) shape += (shape.empty() ? "" : "x") + std::to_string(size);
    text += (text.empty() ? "" : ", ") + shape +
            (input.scalar_type() == torch::kFloat32 ? "" : std::string(" ") + c10::toString(input.scalar_type()));
  }
  return text;
}

// Loads the package and checks it against the reference; a variant that fails here is reported as failed.
void loadCandidate(Candidate& candidate, const Tensors& inputs, const Tensors& reference, int warmup) {
  try {
    candidate.loader = std::make_unique<torch::inductor::AOTIModelPackageLoader>(candidate.result.package);
    for (int call = 0; call < warmup; ++call) (void)runCandidate(candidate, inputs);
    compareOutputs(runCandidate(candidate, inputs), reference, candidate.result);
  } catch (const std::exception& error) {
    candidate.result.available = false;
    candidate.result.note = "the package does not run: " + firstLine(error);
    candidate.loader.reset();
  }
}

}  // namespace

Result<OptimizeReport> runProgramOptimize(const OptimizeOptions& options) {
  if (options.rounds < 1 || options.iterations < 1) {
    return makeError(ErrorCode::kInvalidArgument, "--rounds and --iterations must be at least 1");
  }
  if (options.threads > 0) at::set_num_threads(options.threads);
  const ScratchDir scratch;
  if (scratch.path().empty()) return makeError(ErrorCode::kIo, "cannot make a scratch folder in the temporary folder");
  auto kind = describeModel(options, scratch.path());
  if (!kind) return kind.error();
  OptimizeReport report;
  report.model = options.model_path;
  report.kind = *kind;
  report.rounds = options.rounds;
  report.iterations = options.iterations;
  report.threads = at::get_num_threads();

  Tensors inputs;
  Tensors reference;
  std::vector<Candidate> candidates;
  if (*kind == "aoti_package") {
    // A package keeps no example inputs and no eager program: it is measured alone, as given.
    if (options.input_shapes.empty()) {
      return makeError(ErrorCode::kInvalidArgument,
                       "an AOTInductor package keeps no example inputs: give --input SHAPE");
    }
    torch::manual_seed(options.seed);
    for (const auto& shape : options.input_shapes) inputs.push_back(torch::randn(shape));
    Candidate given;
    given.result.name = "package as given";
    given.result.note = "the AOTInductor package itself (variants need the exported program)";
    given.result.package = options.model_path;
    given.result.package_bytes = static_cast<std::int64_t>(fs::file_size(options.model_path));
    given.convert_input = inputConversion("");
    try {
      given.loader = std::make_unique<torch::inductor::AOTIModelPackageLoader>(options.model_path);
      reference = runCandidate(given, inputs);
    } catch (const std::exception& error) {
      return makeError(ErrorCode::kInvalidArgument,
                       "the package does not run on inputs of shape " + shapesText(inputs) +
                           " (or was built by another torch release): " + firstLine(error));
    }
    given.result.parity_ok = true;
    candidates.push_back(std::move(given));
  } else if (*kind == "exported_program") {
    auto prepared = prepareProgram(options, scratch.path());
    if (!prepared) return prepared.error();
    try {
      inputs = loadTensors(scratch.path() / "inputs");
      reference = loadTensors(scratch.path() / "reference");
    } catch (const std::exception& error) {
      return makeError(ErrorCode::kUnsupported, "cannot read the seeded inputs with libtorch: " + firstLine(error));
    }
    const auto& variants = options.variants.empty() ? kProgramVariants : options.variants;
    for (const auto& name : variants) {
      std::cerr << "optimize: compiling " << name << " ..." << std::flush;
      const CompiledVariant compiled = compileVariant(options, name, scratch.path() / "inputs.pt");
      std::cerr << (compiled.ok ? (compiled.cached ? " cached" : " " + std::to_string(compiled.compile_s) + " s")
                                : " failed")
                << "\n";
      Candidate candidate;
      candidate.result.name = name;
      candidate.result.note = compiled.ok ? describe(name) : compiled.reason;
      candidate.result.available = compiled.ok;
      candidate.result.tolerance = tolerance(name);
      candidate.result.package = compiled.package;
      candidate.result.compile_s = compiled.ok ? compiled.compile_s : -1;
      candidate.result.cached = compiled.cached;
      candidate.result.package_bytes = compiled.ok ? compiled.bytes : -1;
      candidate.convert_input = inputConversion(name);
      candidates.push_back(std::move(candidate));
    }
  } else if (*kind == "torchscript") {
    return runOptimize(options);
  } else {
    return makeError(ErrorCode::kInvalidArgument, "'" + options.model_path +
                                                      "' is neither an exported program (torch.export.save), an "
                                                      "AOTInductor package nor a TorchScript model");
  }
  report.inputs = shapesText(inputs);
  for (auto& candidate : candidates) {
    if (candidate.result.available && !candidate.loader) loadCandidate(candidate, inputs, reference, options.warmup);
  }

  BaselineWorker baseline;
  const bool eager = *kind == "exported_program";
  if (eager) {
    auto started = baseline.start(options, scratch.path() / "inputs.pt", report.threads);
    if (!started) return started.error();
    if (options.warmup > 0) {
      auto warm = baseline.time(options.warmup);
      if (!warm) return warm.error();
    }
  }
  // Interleaved rounds: the baseline and every variant once per round, so that drifts hit all of them alike.
  std::vector<std::vector<std::vector<double>>> latencies(candidates.size() + 1);
  for (int round = 0; round < options.rounds; ++round) {
    if (eager) {
      auto times = baseline.time(options.iterations);
      if (!times) return times.error();
      latencies[0].push_back(std::move(*times));
    }
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (!candidates[i].loader) continue;
      std::vector<double> samples;
      for (int call = 0; call < options.iterations; ++call) {
        const auto started = std::chrono::steady_clock::now();
        (void)runCandidate(candidates[i], inputs);
        samples.push_back(callMs(started));
      }
      latencies[i + 1].push_back(std::move(samples));
    }
  }
  if (eager) {
    OptimizeVariant base;
    base.name = "eager (exported program)";
    base.note = "ExportedProgram.module() under no_grad, in the job's Python";
    base.parity_ok = true;
    report.variants.push_back(base);
  } else {
    latencies.erase(latencies.begin());
  }
  for (auto& candidate : candidates) report.variants.push_back(candidate.result);

  std::vector<std::vector<double>> round_medians(latencies.size());
  for (std::size_t i = 0; i < latencies.size(); ++i) {
    for (const auto& samples : latencies[i]) round_medians[i].push_back(median(samples));
  }
  const LogNoise noise = pooledLogNoise(round_medians);
  for (std::size_t i = 0; i < latencies.size(); ++i) {
    if (latencies[i].empty()) continue;
    summarizeLatencies(latencies[i], report.variants[i]);
    report.variants[i].speedup = speedupInterval(round_medians[0], round_medians[i], noise);
  }
  recommend(report);
  return report;
}

}  // namespace torchscope::compiler
