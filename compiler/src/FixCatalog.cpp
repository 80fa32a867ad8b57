#include "torchscope/compiler/FixCatalog.h"

#include <algorithm>
#include <array>

namespace torchscope::compiler {
namespace {

// quantize-dynamic's arguments, as torchscope_compiler.runtime.QUANTIZE_SCHEMES names them.
constexpr std::array<std::string_view, 3> kQuantizeSchemes = {"torch.ao", "int8-dynamic", "int8-weight-only"};

}  // namespace

const std::vector<FixSpec>& fixCatalog() {
  using E = Effect;
  using R = Requirement;
  static const std::vector<FixSpec> catalog = {
      {"dynamic-shapes", FixKind::kRuntime, true, "torch.compile(dynamic=True): one graph for varying sizes",
       E::kFewerShapeRecompiles, R::kCompiledJob},
      {"tensor-lr", FixKind::kRuntime, true, "learning rate kept in a tensor: scheduler changes no longer recompile",
       E::kFewerScalarRecompiles, R::kCompiledJob},
      {"capture-scalar-outputs", FixKind::kRuntime, false, "Dynamo captures .item() instead of breaking the graph",
       E::kFewerGraphBreaks, R::kCompiledJob},
      {"capture-dynamic-output-shape-ops", FixKind::kRuntime, false,
       "Dynamo captures nonzero/boolean masks instead of breaking the graph", E::kFewerGraphBreaks, R::kCompiledJob},
      {"compile-mode", FixKind::kRuntime, false, "torch.compile mode (arg: the mode)", E::kFasterStep, R::kCompiledJob,
       true},
      {"tf32", FixKind::kRuntime, false, "TF32 matmuls and convolutions on CUDA", E::kFasterStep, R::kCuda},
      {"bf16-autocast", FixKind::kRuntime, false, "bf16 autocast for the whole job"},
      {"inference-mode", FixKind::kRuntime, false, "the job's torch.no_grad() blocks run under inference_mode"},
      {"channels-last", FixKind::kRuntime, false, "Conv2d weights and inputs in channels_last"},
      {"pin-memory", FixKind::kRuntime, false, "DataLoader(pin_memory=True) on CUDA", E::kFasterStep, R::kCuda},
      {"torch-compile", FixKind::kRuntime, false, "the job's outermost modules compiled with torch.compile",
       E::kCompiles},
      {"eager", FixKind::kRuntime, false,
       "compilation off (Dynamo disabled): the compiled regions run eagerly, to measure what compiling gains",
       E::kFasterStep, R::kCompiledJob},
      {"cuda-graphs", FixKind::kRuntime, false, "compile mode reduce-overhead (CUDA graphs), CUDA only", E::kFasterStep,
       R::kCuda},
      {"cache-compile", FixKind::kRuntime, false, "FX graph and AOTAutograd caches on", E::kLessCompileTime,
       R::kSharedCompileCache},
      {"repeat-interleave-output-size", FixKind::kSource, false,
       "repeat_interleave(..., output_size=ARG): no host-device sync (arg: the size expression)",
       E::kFewerGraphBreaksOrSyncs},
      {"item-accumulate-tensor", FixKind::kSource, false,
       "per-step .item() accumulation kept on the device, one .item() after the loop", E::kFewerSyncs},
      {"tuple-keys-to-str", FixKind::kSource, false, "ModuleDict tuple keys joined into strings"},
      {"print-out-of-compiled", FixKind::kSource, false,
       "print/logging/warnings.warn in compiled code guarded by torch.compiler.is_compiling() (arg: optional "
       "FILE:LINE[;...], from the findings)",
       E::kFewerGraphBreaks, R::kCompiledJob},
      {"item-kept-as-tensor", FixKind::kSource, false,
       "n = t.item()/tolist() that only builds or indexes tensors kept a tensor (arg: FILE:LINE[;...], from the "
       "findings)",
       E::kFewerGraphBreaks, R::kCompiledJob},
      {"remove-data-dependent-branch", FixKind::kSource, false,
       "the tensor-valued if at the finding's line made branchless: torch.where, or torch.cond for calls of one "
       "signature (arg: FILE:LINE[;FILE:LINE...], from the "
       "findings)",
       E::kFewerGraphBreaks, R::kCompiledJob},
      {"sdpa", FixKind::kSource, false,
       "hand-written softmax(q @ k.transpose(-2, -1) * scale) @ v replaced by "
       "torch.nn.functional.scaled_dot_product_attention (arg: optional FILE:LINE[;...], from the findings)"},
      {"quantize-dynamic", FixKind::kRuntime, false,
       "int8 quantization of the eval-mode model (arg: torch.ao, the default: dynamic int8 of its nn.Linear/nn.LSTM "
       "layers on the CPU; int8-dynamic or int8-weight-only: torchao's quantize_ of its nn.Linear layers)",
       E::kFasterStep, R::kNone, true},
  };
  return catalog;
}

const FixSpec* findFix(std::string_view id) {
  const auto& catalog = fixCatalog();
  const auto it = std::find_if(catalog.begin(), catalog.end(), [&](const FixSpec& spec) { return spec.id == id; });
  return it == catalog.end() ? nullptr : &*it;
}

std::string_view kindName(FixKind kind) {
  switch (kind) {
    case FixKind::kRuntime: return "runtime";
    case FixKind::kSource: return "source";
    case FixKind::kAdvice: return "advice";
  }
  return "advice";
}

std::string_view effectName(Effect effect) {
  switch (effect) {
    case Effect::kFasterStep: return "a faster step";
    case Effect::kFewerShapeRecompiles: return "fewer shape recompiles";
    case Effect::kFewerScalarRecompiles: return "fewer Python-number recompiles";
    case Effect::kFewerGraphBreaks: return "fewer graph breaks";
    case Effect::kFewerSyncs: return "fewer host-device syncs";
    case Effect::kFewerGraphBreaksOrSyncs: return "fewer graph breaks or syncs";
    case Effect::kCompiles: return "compiled graphs";
    case Effect::kLessCompileTime: return "less compile time";
  }
  return "a faster step";
}

std::string FixRequest::spec() const { return arg.empty() ? id : id + ":" + arg; }

Result<std::vector<FixRequest>> parseFixList(std::string_view text, bool allow_test_fixes) {
  std::vector<FixRequest> requests;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    std::string entry(text.substr(begin, end - begin));
    begin = end + 1;
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (entry.empty()) continue;
    FixRequest request;
    const std::size_t colon = entry.find(':');
    request.id = entry.substr(0, colon);
    if (colon != std::string::npos) request.arg = entry.substr(colon + 1);
    if (request.id == "quantize-dynamic" && !request.arg.empty() &&
        std::find(kQuantizeSchemes.begin(), kQuantizeSchemes.end(), request.arg) == kQuantizeSchemes.end()) {
      return makeError(ErrorCode::kInvalidArgument, "unknown quantization scheme '" + request.arg +
                                                        "' in quantize-dynamic:" + request.arg +
                                                        " (torch.ao, int8-dynamic or int8-weight-only)");
    }
    if (request.id == "quantize-dynamic" && request.arg == kQuantizeSchemes.front()) request.arg.clear();  // default
    if (allow_test_fixes && request.id == "test-change-results") {
      request.kind = FixKind::kRuntime;
    } else if (const FixSpec* spec = findFix(request.id)) {
      request.kind = spec->kind;
      request.has_source_form = spec->has_source_form;
      request.effect = spec->effect;
      request.requirement = spec->requirement;
      request.arg_picks_variant = spec->arg_picks_variant;
    } else {
      return makeError(ErrorCode::kInvalidArgument, "unknown fix id '" + request.id + "'");
    }
    const bool duplicate = std::any_of(requests.begin(), requests.end(), [&](const FixRequest& other) {
      return request.arg_picks_variant ? other.spec() == request.spec() : other.id == request.id;
    });
    if (!duplicate) requests.push_back(std::move(request));
  }
  return requests;
}

}  // namespace torchscope::compiler
