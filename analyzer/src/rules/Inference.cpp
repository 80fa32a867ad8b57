// Model-level advice from op and kernel names: inference/no-inference-mode, vision/channels-last,
// quantization/candidate and attention/manual; inference/transformer-fast-path from the bridge's probe.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include "../LineTimes.h"
#include "../RequestFacts.h"
#include "../Rules.h"
#include "torchscope/analyzer/FixIds.h"
#include "torchscope/base/Saturating.h"

namespace torchscope::analyzer {

namespace {

constexpr std::int64_t kMinimumInferenceOps = 100;
constexpr double kAutogradOverheadPerOp = 2e-6;  // graph recording and version counters per op
constexpr double kConvShare = 0.1;
constexpr double kChannelsLastGain = 0.2;  // typical NHWC convolution speed-up on tensor cores and oneDNN
constexpr double kLinearShare = 0.3;
constexpr double kQuantizationGain = 0.5;  // dynamic int8 runs Linear/LSTM about 2x faster on CPU
constexpr std::int64_t kMinimumAttentionBlocks = 2;
constexpr double kSdpaGain = 0.5;
constexpr std::int64_t kAttentionSpanLines = 4;  // the scores and the product by the values sit this near the softmax
// The fused layer over the layer op by op on this CPU: 2-8 % of the layers' time at the median, up to 18 % in a round
// (bench/transformer_fast_path.py, docs/performance.md); torch reports up to 2x on GPUs with padded batches.
constexpr double kFastPathGain = 0.05;

// A run of the collector records no CPU ops (a profiler trace does): its op census of one step (one request) stands
// in, each op's share of that step times the steady-state steps' time. The census keeps the step's most frequent op
// names (docs/FORMAT.md), which a model's convolutions and matmuls are.
bool fromCensus(const Facts& facts) { return facts.cpu_op_names.empty() && facts.census && facts.census->step_ns > 0; }

double opSeconds(const Facts& facts, std::initializer_list<std::string_view> names, std::int64_t* count = nullptr) {
  double seconds = 0;
  const auto matches = [&](std::string_view op) { return std::find(names.begin(), names.end(), op) != names.end(); };
  if (fromCensus(facts)) {
    const OpCensus& census = *facts.census;
    const double steady_s = facts.steady_step_total_s;
    for (const auto& op : census.frequent_ops) {
      if (!matches(op.name)) continue;
      seconds += static_cast<double>(op.nanos) / static_cast<double>(census.step_ns) * steady_s;
      if (count) *count += op.count * static_cast<std::int64_t>(facts.steady_step_seconds.size());
    }
    return seconds;
  }
  for (const auto& stat : facts.cpu_op_names) {
    if (matches(stat.name)) {
      seconds += stat.seconds;
      if (count) *count += stat.count;
    }
  }
  return seconds;
}

std::int64_t atenOps(const Facts& facts) {
  if (fromCensus(facts)) return facts.census->ops * static_cast<std::int64_t>(facts.steady_step_seconds.size());
  std::int64_t ops = 0;
  for (const auto& stat : facts.cpu_op_names) ops += stat.name.rfind("aten::", 0) == 0 ? stat.count : 0;
  return ops;
}

// A finding from the census is the model's: at the user's line that called it.
void atModelCall(Finding& finding, const Facts& facts) {
  if (!fromCensus(facts) || facts.census->model_file.empty()) return;
  finding.file = facts.census->model_file;
  finding.line = facts.census->model_line;
}

bool anyName(const std::vector<NameStat>& stats, std::initializer_list<std::string_view> needles) {
  for (const auto& stat : stats) {
    if (containsAny(lowercase(stat.name), needles)) return true;
  }
  return false;
}

Result<void> noInferenceMode(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  const std::int64_t ops = atenOps(facts);
  if (facts.training || ops < kMinimumInferenceOps) return {};
  if (anyName(facts.cpu_op_names, {"inference_mode", "inferencemode", "no_grad"})) return {};
  auto marked =
      queryTexts(context.reader,
                 "SELECT key FROM run_attributes WHERE (key LIKE '%inference_mode%' AND value IN ('1', 'true')) "
                 "OR (key LIKE '%grad_enabled%' AND value IN ('0', 'false'))");
  if (!marked) return marked.error();
  if (!marked->empty()) return {};
  // The census cannot tell no_grad from autograd: the bridge's note of autograd at the first request must say so.
  if (fromCensus(facts)) {
    auto recording = queryTexts(context.reader,
                                "SELECT key FROM run_attributes WHERE key = 'requests.grad_enabled' AND value = '1'");
    if (!recording) return recording.error();
    if (recording->empty()) return {};
  }
  Finding finding = makeFinding(
      "inference/no-inference-mode", Severity::kInfo, "Inference runs with autograd enabled",
      fmt::format("The job ran {} aten ops and no backward pass, with no sign of torch.inference_mode(). Autograd "
                  "still records every op for a backward that never comes.",
                  ops),
      {fix::kInferenceMode, "wrap the inference loop in `with torch.inference_mode():`"});
  finding.count = ops;
  atModelCall(finding, facts);
  setImpact(finding, facts, static_cast<double>(ops) * kAutogradOverheadPerOp);
  setEvidence(finding, {{"aten_ops", ops}, {"backward_ops", 0}});
  out.push_back(std::move(finding));
  return {};
}

Result<void> channelsLast(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  std::int64_t convolutions = 0;
  const double conv_s = opSeconds(facts, {"aten::convolution"}, &convolutions);
  if (convolutions == 0) return {};
  double conversion_s = 0;
  bool nhwc_kernels = false;
  for (const auto& stat : facts.kernel_names) {
    const std::string name = lowercase(stat.name);
    if (containsAny(name, {"nchwtonhwc", "nhwctonchw"})) {
      conversion_s += stat.seconds;
    } else if (containsAny(name, {"nhwc", "channels_last"})) {
      nhwc_kernels = true;
    }
  }
  if (nhwc_kernels || facts.windowFraction(conv_s) < kConvShare) return {};
  Finding finding = makeFinding(
      "vision/channels-last", Severity::kInfo, "Convolutions run in NCHW memory format",
      fmt::format("{} convolutions took {} ({} of the run) in the default NCHW layout{}. Channels-last (NHWC) "
                  "convolutions are faster on tensor cores and in oneDNN and avoid layout conversions.",
                  convolutions, formatSeconds(conv_s), formatPercent(facts.windowFraction(conv_s)),
                  conversion_s > 0 ? fmt::format(", plus {} converting layouts", formatSeconds(conversion_s)) : ""),
      {fix::kChannelsLast, "model.to(memory_format=torch.channels_last) and the same for the inputs"});
  finding.count = convolutions;
  atModelCall(finding, facts);
  setImpact(finding, facts, conv_s * kChannelsLastGain + conversion_s);
  setEvidence(
      finding,
      {{"convolutions", convolutions}, {"convolution_seconds", conv_s}, {"layout_conversion_seconds", conversion_s}});
  out.push_back(std::move(finding));
  return {};
}

bool servesRequests(const Facts& facts) {
  return std::any_of(facts.steps.begin(), facts.steps.end(),
                     [](const store::Step& step) { return step.source == kRequestSource; });
}

Result<void> quantizationCandidate(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  // Dynamic quantization targets CPU inference.
  if (facts.training || facts.count("kernels") > 0) return {};
  std::int64_t calls = 0;
  // The census counts ops below autograd, where nn.Linear is aten::addmm and nn.LSTM on the CPU is oneDNN's
  // aten::mkldnn_rnn_layer, which is left out: dynamic int8 LSTMs ran slower than it (docs/rules.md).
  double linear_s = opSeconds(facts, {"aten::linear", "aten::lstm", "aten::gru"}, &calls);
  if (calls == 0) linear_s = opSeconds(facts, {"aten::addmm"}, &calls);
  // From the census, the share of the steady-state requests' time: the model's make-up, not the run's start-up.
  const double share = fromCensus(facts) ? (facts.steady_step_total_s > 0 ? linear_s / facts.steady_step_total_s : 0)
                                         : facts.windowFraction(linear_s);
  if (calls == 0 || share < kLinearShare) return {};
  Finding finding = makeFinding(
      "quantization/candidate", Severity::kInfo, "Linear/LSTM-heavy inference: a candidate for dynamic quantization",
      fmt::format("Linear and recurrent layers took {} of this CPU inference {} ({} calls). Dynamic int8 "
                  "quantization runs them 2-4x faster with a small accuracy cost; check accuracy after.",
                  formatPercent(share),
                  !fromCensus(facts)      ? "run"
                  : servesRequests(facts) ? "job's steady-state requests"
                                          : "job's steady-state steps",
                  calls),
      {fix::kQuantizeDynamic,
       "torch.ao.quantization.quantize_dynamic(model, {nn.Linear, nn.LSTM}, dtype=torch.qint8)"});
  finding.count = calls;
  atModelCall(finding, facts);
  setImpact(finding, facts, linear_s * kQuantizationGain);
  nlohmann::json evidence = {
      {"linear_seconds", linear_s}, {"share_of_run", facts.windowFraction(linear_s)}, {"calls", calls}};
  if (fromCensus(facts)) evidence["share_of_steady_steps"] = share;
  setEvidence(finding, std::move(evidence));
  out.push_back(std::move(finding));
  return {};
}

// The text of lines [first, last] of a file (fewer where it is shorter); empty when it cannot be read.
std::vector<std::string> sourceLines(const std::string& file, std::int64_t first, std::int64_t last) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  std::string text;
  for (std::int64_t number = 1; number <= last && std::getline(in, text); ++number) {
    if (number >= first) lines.push_back(text);
  }
  return lines;
}

// The user's line of hand-written attention among the sampled lines, most self time first: one that calls softmax,
// with a product by the keys transposed and one by the values within kAttentionSpanLines of it, in the job's source.
struct AttentionSite {
  const LineTime* softmax = nullptr;
  double seconds = 0;  // the self time of the sampled lines of its function around it
};

AttentionSite sampledAttention(const LineTable& table) {
  AttentionSite site;
  for (const LineTime& line : table.lines) {
    const auto text = sourceLines(line.file, line.line, line.line);
    if (text.empty() || text.front().find("softmax") == std::string::npos) continue;
    std::string around;
    for (const auto& near : sourceLines(line.file, line.line - kAttentionSpanLines, line.line + kAttentionSpanLines)) {
      around += near + "\n";
    }
    const bool keys = containsAny(around, {"transpose(", ".mT"});
    const bool product = containsAny(around, {"@", "matmul(", "bmm("});
    if (!keys || !product) continue;
    site.softmax = &line;
    for (const LineTime& other : table.lines) {
      if (other.file == line.file && other.function == line.function &&
          std::abs(other.line - line.line) <= kAttentionSpanLines) {
        site.seconds += other.self_s;
      }
    }
    return site;
  }
  return site;
}

// Hand-written attention shows as matmul -> softmax -> matmul on one thread, outermost ops only, in a profiler trace;
// in a run of the collector (no CPU ops) as sampled time on a line that calls softmax between the two products.
Result<void> manualAttention(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  if (anyName(facts.cpu_op_names, {"scaled_dot_product", "flash_attention", "efficient_attention"}) ||
      anyName(facts.kernel_names, {"flash", "fmha", "efficient_attention", "sdpa"})) {
    return {};
  }
  struct ThreadState {
    base::Nanos last_end = -1;
    int stage = 0;  // 0: nothing, 1: matmul seen, 2: matmul then softmax
    base::Nanos block_start = 0;
  };
  std::map<std::pair<std::int64_t, std::int64_t>, ThreadState> threads;
  std::int64_t blocks = 0;
  double block_s = 0;
  for (const auto& op : facts.attention_ops) {  // by thread and start
    ThreadState& state = threads[{op.pid, op.tid}];
    if (op.start_ns < state.last_end) continue;  // nested inside the previous outer op
    state.last_end = op.end_ns;
    if (!op.softmax && state.stage == 2) {
      ++blocks;
      block_s += toSeconds(static_cast<double>(base::spanNanos(state.block_start, op.end_ns)));
      state.stage = 1;
      state.block_start = op.start_ns;
    } else if (!op.softmax) {
      state.stage = 1;
      state.block_start = op.start_ns;
    } else {
      state.stage = state.stage == 1 ? 2 : 0;
    }
  }
  // CPU ops without the pattern: the ops are the better evidence, and the line table is not built for nothing.
  const bool from_ops = blocks >= kMinimumAttentionBlocks;
  if (!from_ops && facts.count("cpu_ops") > 0) return {};
  AttentionSite site;
  LineTable table;
  if (facts.count("stack_samples") > 0) {
    auto built = buildLineTable(context.reader, facts, context.code);
    if (!built) return built.error();
    table = std::move(*built);
    site = sampledAttention(table);
  }
  if (!from_ops && site.softmax == nullptr) return {};
  const std::string where = site.softmax ? formatLocation(site.softmax->file, site.softmax->line) : "";
  const std::string seen =
      from_ops ? fmt::format("The ops show {} attention blocks written as matmul -> softmax -> matmul ({} in total){}.",
                             blocks, formatSeconds(block_s), where.empty() ? "" : ", the softmax at " + where)
               : fmt::format(
                     "The stack sampler puts {} on the lines around {}, a softmax between a product by the "
                     "keys transposed and one by the values: attention written by hand.",
                     formatSeconds(site.seconds), where);
  Finding finding = makeFinding(
      "attention/manual", Severity::kInfo, "Hand-written attention (matmul, softmax, matmul)",
      seen + fmt::format(" torch.nn.functional.scaled_dot_product_attention runs {} as one fused (flash) kernel with "
                         "less memory.",
                         from_ops ? "them" : "it"),
      {fix::kSdpa, "replace softmax(q @ k.transpose(-2, -1) * scale) @ v by F.scaled_dot_product_attention(q, k, v)"});
  if (site.softmax != nullptr) {
    finding.file = site.softmax->file;
    finding.line = site.softmax->line;
    finding.function = site.softmax->function;
  }
  finding.count = from_ops ? blocks : 1;
  setImpact(finding, facts, (from_ops ? block_s : site.seconds) * kSdpaGain);
  if (from_ops) {
    setEvidence(finding, {{"blocks", blocks}, {"block_seconds", block_s}});
  } else {
    setEvidence(finding, {{"source", "stack_samples"}, {"sampled_seconds", site.seconds}});
  }
  out.push_back(std::move(finding));
  return {};
}

// What to change for torch's reason (torch/nn/modules/transformer.py, TransformerEncoderLayer.forward), and the fix
// that does it where there is one.
FixProposal fastPathRemedy(const std::string& reason) {
  const auto says = [&](std::string_view words) { return reason.find(words) != std::string::npos; };
  if (says("grad is enabled")) {
    return {fix::kInferenceMode, "run the requests under `with torch.inference_mode():`"};
  }
  if (says("training is enabled")) return {"", "call model.eval() before serving (it also turns dropout off)"};
  if (says("batch_first")) {
    return {"", "build the layers with batch_first=True and pass (batch, sequence, features) inputs"};
  }
  if (says("num_head is odd")) return {"", "use an even number of attention heads"};
  if (says("activation_relu_or_gelu")) return {"", "use activation=\"relu\" or \"gelu\" in the encoder layers"};
  if (says("autocast")) return {"", "cast the model (model.to(torch.bfloat16)) instead of running it under autocast"};
  if (says("hooks")) return {"", "remove the forward hooks from the encoder layers while serving"};
  if (says("get_fastpath_enabled")) return {"", "leave torch.backends.mha.set_fastpath_enabled(True) on"};
  if (says("bias=False")) return {"", "keep the attention's bias (bias=True, the default)"};
  if (says("eps")) return {"", "give norm1 and norm2 the same eps"};
  return {"", "change what torch's reason names"};
}

// nn.TransformerEncoderLayer has a fused inference kernel (torch._transformer_encoder_layer_fwd) that torch takes only
// under conditions the job may miss (eval, no grad, batch_first, ...); the bridge reads torch's own reason.
Result<void> transformerFastPath(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  if (facts.training) return {};
  const TransformerFastPath fast_path = analyzer::transformerFastPath(context.reader);
  if (!fast_path.missed()) return {};
  const std::int64_t missed = fast_path.layer_calls - fast_path.fast_path_calls;
  const FixProposal remedy = fastPathRemedy(fast_path.reason);
  Finding finding = makeFinding(
      "inference/transformer-fast-path", Severity::kInfo,
      "The transformer encoder layers miss their fused inference kernel",
      fmt::format("At the first request {} of {} nn.TransformerEncoderLayer calls ran the layer op by op instead of "
                  "torch's fused kernel (torch._transformer_encoder_layer_fwd); torch's reason: \"{}\". The layers "
                  "took {} of that request. To take the fast path: {}.",
                  missed, fast_path.layer_calls, fast_path.reason, formatPercent(fast_path.layer_share),
                  remedy.summary),
      remedy);
  finding.count = missed;
  if (facts.census && !facts.census->model_file.empty()) {
    finding.file = facts.census->model_file;
    finding.line = facts.census->model_line;
    finding.function = facts.census->model_function;
  }
  const double missed_share = static_cast<double>(missed) / static_cast<double>(fast_path.layer_calls);
  setImpact(finding, facts, facts.steady_step_total_s * fast_path.layer_share * missed_share * kFastPathGain);
  setEvidence(finding, {{"layer_calls", fast_path.layer_calls},
                        {"fast_path_calls", fast_path.fast_path_calls},
                        {"reason", fast_path.reason},
                        {"layer_share", fast_path.layer_share}});
  out.push_back(std::move(finding));
  return {};
}

}  // namespace

Result<void> inferenceRules(const Context& context, std::vector<Finding>& out) {
  for (auto rule : {noInferenceMode, channelsLast, quantizationCandidate, manualAttention, transformerFastPath}) {
    if (auto done = rule(context, out); !done) return done;
  }
  return {};
}

}  // namespace torchscope::analyzer
