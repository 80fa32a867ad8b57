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

// A model run eagerly in a Python worker, timed in the rounds beside the packages.
struct EagerRow {
  EagerWorker* worker;
  OptimizeVariant result;
};

// The eager rows: the job's module first (with --export: the baseline, its outputs the reference), then the program
// run eagerly, whose parity is then its agreement with the job's module.
Result<std::vector<EagerRow>> startEagerRows(const OptimizeOptions& options, const fs::path& scratch,
                                             const ExportedModule* exported, EagerWorker* job_module,
                                             EagerWorker& baseline, int threads, Tensors& reference) {
  std::vector<EagerRow> rows;
  const fs::path inputs = scratch / "inputs.pt";
  const Tensors program_outputs = reference;
  if (job_module != nullptr) {
    EagerRow job{job_module, {}};
    job.result.name = "eager (the job's module)";
    job.result.note = exported->module + " (forward at " + exported->defined_at + "), called at " +
                      exported->called_at + ": run as the job left it, under no_grad, in the job's process";
    if (auto loaded = job_module->loadInputs(inputs, threads); !loaded) return loaded.error();
    // Two calls on the same inputs: a module that answers them differently is no reference for parity.
    for (const char* stem : {"job_outputs", "job_outputs_again"}) {
      if (auto written = job_module->writeOutputs(scratch / stem); !written) return written.error();
    }
    try {
      reference = loadTensors(scratch / "job_outputs");
      job.result.tolerance = tolerance("aoti");
      compareOutputs(loadTensors(scratch / "job_outputs_again"), reference, job.result);
      job.result.top1_agreement = -1;
    } catch (const std::exception& error) {
      return makeError(ErrorCode::kUnsupported, "cannot read the job's module's outputs: " + firstLine(error));
    }
    rows.push_back(std::move(job));
  }
  if (auto started = startBaseline(options, scratch, baseline); !started) return started.error();
  if (auto loaded = baseline.loadInputs(inputs, threads); !loaded) return loaded.error();
  EagerRow program{&baseline, {}};
  program.result.name = "eager (exported program)";
  program.result.note = "ExportedProgram.module() under no_grad, in the job's Python";
  program.result.tolerance = tolerance("aoti");
  program.result.parity_ok = true;
  if (job_module != nullptr) compareOutputs(program_outputs, reference, program.result);
  rows.push_back(std::move(program));
  for (auto& row : rows) {
    if (options.warmup < 1) continue;
    if (auto warm = row.worker->time(options.warmup); !warm) return warm.error();
  }
  return rows;
}

Result<OptimizeReport> measureModel(const OptimizeOptions& options, const fs::path& scratch,
                                    const ExportedModule* exported, EagerWorker* job_module) {
  if (options.threads > 0) at::set_num_threads(options.threads);
  auto kind = describeModel(options, scratch);
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
    auto prepared = prepareProgram(options, scratch);
    if (!prepared) return prepared.error();
    try {
      inputs = loadTensors(scratch / "inputs");
      reference = loadTensors(scratch / "reference");
    } catch (const std::exception& error) {
      return makeError(ErrorCode::kUnsupported, "cannot read the seeded inputs with libtorch: " + firstLine(error));
    }
    const auto& variants = options.variants.empty() ? kProgramVariants : options.variants;
    for (const auto& name : variants) {
      std::cerr << "optimize: compiling " << name << " ..." << std::flush;
      const CompiledVariant compiled = compileVariant(options, name, scratch / "inputs.pt");
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
  } else if (*kind == "aoti_shared_library") {
    return makeError(ErrorCode::kInvalidArgument,
                     "'" + options.model_path +
                         "' is a model library of torch._export.aot_compile (torch 2.3-2.5), which keeps neither "
                         "the program nor its input shapes: optimize measures torch.export programs (.pt2); save one "
                         "with torch.export.save(torch.export.export(model, inputs), 'model.pt2')");
  } else {
    return makeError(ErrorCode::kInvalidArgument, "'" + options.model_path +
                                                      "' is neither an exported program (torch.export.save), an "
                                                      "AOTInductor package nor a TorchScript model");
  }
  report.inputs = shapesText(inputs);

  EagerWorker baseline;
  std::vector<EagerRow> eager;
  if (*kind == "exported_program") {
    auto rows = startEagerRows(options, scratch, exported, job_module, baseline, report.threads, reference);
    if (!rows) return rows.error();
    eager = std::move(*rows);
  }
  for (auto& candidate : candidates) {
    if (candidate.result.available && !candidate.loader) loadCandidate(candidate, inputs, reference, options.warmup);
  }
  // Interleaved rounds: every eager row and every variant once per round, so that drifts hit all of them alike.
  std::vector<std::vector<std::vector<double>>> latencies(eager.size() + candidates.size());
  for (int round = 0; round < options.rounds; ++round) {
    for (std::size_t i = 0; i < eager.size(); ++i) {
      auto times = eager[i].worker->time(options.iterations);
      if (!times) return times.error();
      latencies[i].push_back(std::move(*times));
    }
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (!candidates[i].loader) continue;
      std::vector<double> samples;
      for (int call = 0; call < options.iterations; ++call) {
        const auto started = std::chrono::steady_clock::now();
        (void)runCandidate(candidates[i], inputs);
        samples.push_back(callMs(started));
      }
      latencies[eager.size() + i].push_back(std::move(samples));
    }
  }
  for (auto& row : eager) report.variants.push_back(row.result);
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

Result<void> checkRounds(const OptimizeOptions& options) {
  if (options.rounds < 1 || options.iterations < 1) {
    return makeError(ErrorCode::kInvalidArgument, "--rounds and --iterations must be at least 1");
  }
  return {};
}

}  // namespace

Result<OptimizeReport> runProgramOptimize(const OptimizeOptions& options) {
  if (auto checked = checkRounds(options); !checked) return checked.error();
  const ScratchDir scratch;
  if (scratch.path().empty()) return makeError(ErrorCode::kIo, "cannot make a scratch folder in the temporary folder");
  return measureModel(options, scratch.path(), nullptr, nullptr);
}

Result<OptimizeReport> runExportOptimize(OptimizeOptions options, const std::vector<std::string>& job,
                                         const std::string& program) {
  if (auto checked = checkRounds(options); !checked) return checked.error();
  const ScratchDir scratch;
  if (scratch.path().empty()) return makeError(ErrorCode::kIo, "cannot make a scratch folder in the temporary folder");
  EagerWorker job_module;  // declared after the scratch folder: the worker ends before its files go
  auto exported = startJobExport(options, job, program, scratch.path(), job_module);
  if (!exported) return exported.error();
  std::cerr << "optimize: exported " << exported->module << " (called at " << exported->called_at << ", batch "
            << (exported->dynamic_batch ? "dynamic" : "static") << ") to " << program << "\n";
  options.model_path = program;
  return measureModel(options, scratch.path(), &*exported, &job_module);
}

}  // namespace torchscope::compiler
