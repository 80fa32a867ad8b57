// compile/not-compiled from the op census (an eager job on the CPU, or any job without profiler op records): the
// counted step's ops times a typical eager per-op overhead, against the steady-state step.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "../LineTimes.h"
#include "../Rules.h"
#include "NotCompiled.h"
#include "torchscope/analyzer/FixIds.h"

namespace torchscope::analyzer {

namespace {

constexpr std::int64_t kCensusOpsPerStep = 100;  // as the trace-based rule's kOpsPerStep
constexpr double kCensusSmallOpShare = 0.5;      // of the ops, shorter than the census's threshold (50 us)
// Python binding, autograd and dispatcher cost of one eager aten op on the CPU, when the census did not measure it
// beside the job: `a * b` on 4x16 tensors costs 2.5 us without and 3.8 us with autograd (torch 2.13, best of
// 5 x 20 000 calls on an idle core); backward ops pay less.
constexpr double kEagerOpOverheadSeconds = 3e-6;
// Of the counted step, the time outside its sizable ops (Python, autograd, dispatch, the short ops): at least this
// much. Both figures come from the same step, so that a machine busy with other work, which stretches a whole step
// (and makes a short calibration look cheap beside it), moves them together.
constexpr double kDispatchBoundShare = 0.5;
// torch.compile fuses the short ops into a few kernels; the graph's own call, the backward's and the kernels'
// launches stay: half of the overhead, an estimate the fix measures.
constexpr double kOverheadRemoved = 0.5;

struct CensusPlace {
  std::string file;
  std::int64_t line = -1;
  std::string function;
  std::string sentence;  // where the model runs, in words ("" unknown)
};

CensusPlace censusPlace(const OpCensus& census) {
  if (!census.model_file.empty()) {
    const std::string model = census.model.empty() ? "the model" : fmt::format("`{}`", census.model);
    return {census.model_file, census.model_line, census.model_function,
            fmt::format(" Your line {} calls {}, the step's first module.",
                        formatLocation(census.model_file, census.model_line), model)};
  }
  if (census.step_file.empty()) return {};
  return {census.step_file, census.step_line, census.step_function,
          fmt::format(" The step ends at your line {}.", formatLocation(census.step_file, census.step_line))};
}

std::string frequentOpsText(const OpCensus& census) {
  std::string text;
  for (std::size_t i = 0; i < std::min<std::size_t>(census.frequent_ops.size(), 3); ++i) {
    const auto& op = census.frequent_ops[i];
    text += fmt::format("{}{} x{}", text.empty() ? "" : ", ", op.name, op.count);
  }
  return text;
}

// "The sampler puts 61.2 % of the step on that line." when the store has sampled stacks of that line.
Result<std::string> sampledShareText(const Context& context, const CensusPlace& place) {
  if (context.facts.count("stack_samples") == 0 || place.file.empty()) return std::string{};
  auto table = buildLineTable(context.reader, context.facts, context.code);
  if (!table) return table.error();
  for (const auto& line : table->lines) {
    if (line.file == place.file && line.line == place.line && table->step_s > 0) {
      return fmt::format(" The stack sampler puts {} of the step on that line (its calls included).",
                         formatPercent(std::min(1.0, line.total_per_step_s / table->step_s)));
    }
  }
  return std::string{};
}

}  // namespace

Result<void> notCompiledFromCensus(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  if (facts.compiled || !facts.census) return {};
  const OpCensus& census = *facts.census;
  const double short_share =
      census.ops > 0 ? static_cast<double>(census.short_ops) / static_cast<double>(census.ops) : 0;
  const bool measured_step = !facts.steady_step_seconds.empty();
  const double step_s = measured_step ? facts.steady_step_median_s : toSeconds(static_cast<double>(census.step_ns));
  const double op_cost_s =
      census.op_overhead_ns > 0 ? toSeconds(static_cast<double>(census.op_overhead_ns)) : kEagerOpOverheadSeconds;
  const double dispatch_s = static_cast<double>(census.ops) * op_cost_s;
  const base::Nanos long_op_ns = std::max<base::Nanos>(0, census.op_ns - census.short_op_ns);
  const double overhead_share =
      census.step_ns > 0
          ? std::clamp(1.0 - static_cast<double>(long_op_ns) / static_cast<double>(census.step_ns), 0.0, 1.0)
          : 0;
  const double overhead_s = step_s * overhead_share;
  if (census.ops < kCensusOpsPerStep || short_share < kCensusSmallOpShare || overhead_share < kDispatchBoundShare) {
    return {};
  }
  const CensusPlace place = censusPlace(census);
  auto sampled = sampledShareText(context, place);
  if (!sampled) return sampled.error();
  Finding finding = makeFinding(
      "compile/not-compiled", Severity::kWarning,
      fmt::format("Eager step dispatch-bound: {} ops per step, torch.compile would fuse them", census.ops),
      fmt::format(
          "One step of this eager job (step {}, counted op by op) dispatched {} aten ops, {} of them shorter "
          "than {} (most frequent: {}). Its sizable ops took {} of that step's {}: the other {} of the step goes to "
          "Python, autograd and launching small ops, not to computing, about {} of the {} {} step (at about "
          "{} per op, dispatching alone is {}).{}{} torch.compile traces the model into a graph and fuses "
          "these ops into a few kernels; `torchscope fix --fixes torch-compile` measures what it gains on "
          "this job.",
          census.step, census.ops, census.short_ops,
          formatSeconds(toSeconds(static_cast<double>(census.short_op_threshold_ns))), frequentOpsText(census),
          formatSeconds(toSeconds(static_cast<double>(long_op_ns))),
          formatSeconds(toSeconds(static_cast<double>(census.step_ns))), formatPercent(overhead_share),
          formatSeconds(overhead_s), formatSeconds(step_s), measured_step ? "steady-state" : "counted",
          formatSeconds(op_cost_s), formatSeconds(dispatch_s), place.sentence, *sampled),
      {fix::kTorchCompile, place.file.empty() ? std::string("model = torch.compile(model)")
                                              : fmt::format("model = torch.compile(model) for the model called at {}",
                                                            formatLocation(place.file, place.line))});
  finding.file = place.file;
  finding.line = place.line;
  finding.function = place.function;
  finding.count = census.ops;
  const double steady_total =
      measured_step ? std::accumulate(facts.steady_step_seconds.begin(), facts.steady_step_seconds.end(), 0.0) : step_s;
  setImpact(finding, facts, steady_total * overhead_share * kOverheadRemoved);
  setEvidence(finding, {{"source", "op_census"},
                        {"census_step", census.step},
                        {"ops", census.ops},
                        {"short_ops", census.short_ops},
                        {"short_op_share", short_share},
                        {"short_op_threshold_seconds", toSeconds(static_cast<double>(census.short_op_threshold_ns))},
                        {"op_overhead_seconds", op_cost_s},
                        {"op_overhead_measured", census.op_overhead_ns > 0},
                        {"dispatch_per_step_seconds", dispatch_s},
                        {"long_op_seconds", toSeconds(static_cast<double>(long_op_ns))},
                        {"census_step_seconds", toSeconds(static_cast<double>(census.step_ns))},
                        {"overhead_per_step_seconds", overhead_s},
                        {"step_seconds", step_s},
                        {"step_measured", measured_step},
                        {"overhead_share", overhead_share},
                        {"model", census.model}});
  out.push_back(std::move(finding));
  return {};
}

}  // namespace torchscope::analyzer
