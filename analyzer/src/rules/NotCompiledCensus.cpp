// compile/not-compiled from the op census (an eager job on the CPU, or any job without profiler op records): the
// counted step's ops by the user's line that issued them, each place's time outside sizable ops against the
// steady-state step, with the advice that fits there (torch.compile of a model, batching a Python loop outside it).
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <utility>

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
// (and makes a short calibration look cheap beside it), moves them together. A place gets a finding when as much of
// its own time (its ops' and the Python before them) is outside its sizable ops.
constexpr double kDispatchBoundShare = 0.5;
// torch.compile fuses the short ops into a few kernels; the graph's own call, the backward's and the kernels'
// launches stay: half of the overhead, an estimate the fix measures. Batching a loop's calls or moving it to
// DataLoader workers is estimated alike.
constexpr double kOverheadRemoved = 0.5;

using CensusSite = OpCensus::Site;
using SiteContext = OpCensus::Site::Context;

// The ops one finding is about: a model call with its backward, one function of the user's outside any model (its
// lines' ops, issued right there or through one library function), a backward without a model, or, in a store from
// before sites were recorded, the whole step.
struct OpGroup {
  SiteContext context = SiteContext::kModel;
  bool whole_step = false;
  std::string via;   // a model's class; outside, the library function its lines called ("" torch's own ops)
  std::string file;  // the model's call, or the group's line with the most ops
  std::int64_t line = -1;
  std::string function;
  std::int64_t ops = 0;
  std::int64_t short_ops = 0;
  base::Nanos op_ns = 0;
  base::Nanos short_op_ns = 0;
  base::Nanos gap_ns = 0;                   // the Python time before its ops
  std::vector<const CensusSite*> sites;     // its own sites, most ops first
  std::vector<const CensusSite*> backward;  // a model's: the backward sites joined to it

  void add(const CensusSite& site, std::vector<const CensusSite*>& into) {
    ops += site.ops;
    short_ops += site.short_ops;
    op_ns += site.op_ns;
    short_op_ns += site.short_op_ns;
    gap_ns += site.gap_ns;
    into.push_back(&site);
  }
  [[nodiscard]] base::Nanos longOpNs() const { return std::max<base::Nanos>(0, op_ns - short_op_ns); }
  [[nodiscard]] base::Nanos timeNs() const { return gap_ns + op_ns; }
  // Python, autograd, dispatch and the short ops: what is not computing.
  [[nodiscard]] base::Nanos overheadNs() const { return gap_ns + short_op_ns; }
  [[nodiscard]] bool optimizer() const { return via.starts_with("torch.optim."); }
};

OpGroup& groupFor(std::vector<OpGroup>& groups, const CensusSite& site, bool by_line) {
  for (auto& group : groups) {
    if (group.context == site.context && group.file == site.file && group.via == site.via &&
        (by_line ? group.line == site.line : group.function == site.function)) {
      return group;
    }
  }
  OpGroup& group = groups.emplace_back();
  group.context = site.context;
  group.via = site.via;
  group.file = site.file;
  group.line = site.line;
  group.function = site.function;
  return group;
}

// Model calls by their line; the outside sites by function; the backward joins the model with the most ops
// (torch.compile of a model compiles its backward too), else stays a group of its own at the line that started it.
std::vector<OpGroup> groupSites(const OpCensus& census) {
  std::vector<OpGroup> groups;
  for (const auto& site : census.sites) {
    if (site.context == SiteContext::kBackward) continue;
    OpGroup& group = groupFor(groups, site, site.context == SiteContext::kModel);
    group.add(site, group.sites);
  }
  OpGroup* model = nullptr;
  for (auto& group : groups) {
    if (group.context == SiteContext::kModel && (model == nullptr || group.ops > model->ops)) model = &group;
  }
  for (const auto& site : census.sites) {
    if (site.context != SiteContext::kBackward) continue;
    if (model != nullptr) {
      model->add(site, model->backward);
    } else {
      OpGroup& group = groupFor(groups, site, true);
      group.add(site, group.sites);
    }
  }
  for (auto& group : groups) {
    std::stable_sort(group.sites.begin(), group.sites.end(),
                     [](const CensusSite* a, const CensusSite* b) { return a->ops > b->ops; });
    group.line = group.sites.front()->line;
  }
  return groups;
}

// A store without sites: the step's ops at the model's call, else at the line that ended the step.
OpGroup wholeStep(const OpCensus& census) {
  OpGroup group;
  group.whole_step = true;
  group.via = census.model;
  const bool model_known = !census.model_file.empty();
  group.file = model_known ? census.model_file : census.step_file;
  group.line = model_known ? census.model_line : census.step_line;
  group.function = model_known ? census.model_function : census.step_function;
  group.ops = census.ops;
  group.short_ops = census.short_ops;
  group.op_ns = census.op_ns;
  group.short_op_ns = census.short_op_ns;
  group.gap_ns = std::max<base::Nanos>(0, census.step_ns - census.op_ns);
  return group;
}

std::string frequentOpsText(const std::vector<OpCensus::FrequentOp>& ops) {
  std::string text;
  for (std::size_t i = 0; i < std::min<std::size_t>(ops.size(), 3); ++i) {
    text += fmt::format("{}{} x{}", text.empty() ? "" : ", ", ops[i].name, ops[i].count);
  }
  return text;
}

std::vector<OpCensus::FrequentOp> groupFrequentOps(const OpCensus& census, const OpGroup& group) {
  if (group.whole_step) return census.frequent_ops;
  std::map<std::string, OpCensus::FrequentOp> by_name;
  for (const auto* sites : {&group.sites, &group.backward}) {
    for (const CensusSite* site : *sites) {
      for (const auto& op : site->frequent_ops) {
        auto& summed = by_name[op.name];
        summed.name = op.name;
        summed.count += op.count;
        summed.nanos += op.nanos;
      }
    }
  }
  std::vector<OpCensus::FrequentOp> ops;
  for (auto& [name, op] : by_name) ops.push_back(std::move(op));
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
  return ops;
}

// "job.py:13 (aten::mul x512, aten::slice x512), job.py:11 (aten::randn x512)"
std::string censusLinesText(const OpGroup& group) {
  constexpr std::size_t kNamed = 3;
  std::string text;
  for (std::size_t i = 0; i < std::min(group.sites.size(), kNamed); ++i) {
    const CensusSite& site = *group.sites[i];
    text += fmt::format("{}{} ({})", i == 0 ? "" : ", ", formatLocation(site.file, site.line),
                        frequentOpsText(site.frequent_ops));
  }
  if (const std::size_t more = group.sites.size() - std::min(group.sites.size(), kNamed); more > 0) {
    text += fmt::format(" and {} more line{}", more, more == 1 ? "" : "s");
  }
  return text;
}

// A line that issued one op this many times in one step ran in a Python loop.
constexpr std::int64_t kLoopRepeats = 10;

bool inLoop(const OpGroup& group) {
  return std::any_of(group.sites.begin(), group.sites.end(), [](const CensusSite* site) {
    return !site->frequent_ops.empty() && site->frequent_ops.front().count >= kLoopRepeats;
  });
}

// " The stack sampler puts 61.2 % of the step on that line (its calls included)." for a model's call; for the lines
// of an outside group, their own share summed.
Result<std::string> sampledShareText(const Context& context, const OpGroup& group) {
  if (context.facts.count("stack_samples") == 0 || group.file.empty()) return std::string{};
  auto table = buildLineTable(context.reader, context.facts, context.code);
  if (!table) return table.error();
  if (table->step_s <= 0) return std::string{};
  if (group.context != SiteContext::kOutside) {
    for (const auto& line : table->lines) {
      if (line.file == group.file && line.line == group.line) {
        return fmt::format(" The stack sampler puts {} of the step on that line (its calls included).",
                           formatPercent(std::min(1.0, line.total_per_step_s / table->step_s)));
      }
    }
    return std::string{};
  }
  double self_s = 0;
  for (const auto& line : table->lines) {
    for (const CensusSite* site : group.sites) {
      if (line.file == site->file && line.line == site->line) self_s += line.self_per_step_s;
    }
  }
  if (self_s <= 0) return std::string{};
  return fmt::format(" The stack sampler puts {} of the step on {}.",
                     formatPercent(std::min(1.0, self_s / table->step_s)),
                     group.sites.size() == 1 ? "that line" : "these lines");
}

std::string groupLocation(const OpGroup& group) { return formatLocation(group.file, group.line); }

// Who issued the group's ops, in words, after "N of them, M shorter than 50 us (most frequent: ...), ".
std::string issuedByText(const OpGroup& group) {
  const std::string model = group.via.empty() ? "the model" : fmt::format("`{}`", group.via);
  switch (group.context) {
    case SiteContext::kModel: {
      std::string text = fmt::format("ran in {}, called at your line {}", model, groupLocation(group));
      if (!group.backward.empty()) {
        text += fmt::format(", and in its backward (your line {})",
                            formatLocation(group.backward.front()->file, group.backward.front()->line));
      }
      return text;
    }
    case SiteContext::kBackward:
      return fmt::format("ran in the backward started at your line {}, of a forward outside any module",
                         groupLocation(group));
    case SiteContext::kOutside: break;
  }
  if (group.optimizer()) {
    return fmt::format("were issued by the optimizer's step at your line {} (`{}`), outside the model",
                       groupLocation(group), group.via);
  }
  const std::string where = inLoop(group) ? "by a Python loop in" : "by";
  if (!group.via.empty()) {
    return fmt::format("were issued outside the model {} your function `{}`, whose line {} calls `{}`", where,
                       group.function, groupLocation(group), group.via);
  }
  return fmt::format("were issued outside the model {} your function `{}`: {}", where, group.function,
                     censusLinesText(group));
}

// "`make_batch`", or what to compile when the ops come from the script's top level.
std::string compileTarget(const OpGroup& group) {
  return group.function.empty() || group.function.starts_with("<") ? std::string("that code, moved into a function")
                                                                   : fmt::format("`{}`", group.function);
}

// What fits where the ops come from, and the fix proposed.
std::pair<std::string, FixProposal> adviceFor(const OpCensus& census, const OpGroup& group) {
  const std::string at = groupLocation(group);
  switch (group.context) {
    case SiteContext::kModel:
      return {
          " torch.compile traces the model into a graph and fuses these ops into a few kernels; `torchscope fix "
          "--fixes torch-compile` measures what it gains on this job.",
          {fix::kTorchCompile, group.file.empty()
                                   ? std::string("model = torch.compile(model)")
                                   : fmt::format("model = torch.compile(model) for the model called at {}", at)}};
    case SiteContext::kBackward:
      return {
          " torch.compile of the code whose forward made this backward fuses the backward too; `torchscope fix "
          "--fixes torch-compile` measures what it gains on this job.",
          {fix::kTorchCompile, fmt::format("torch.compile the forward whose backward starts at {}", at)}};
    case SiteContext::kOutside: break;
  }
  if (group.optimizer()) {
    return {
        " torch.compile of the model would not touch them. The optimizer updates the parameters one at a time: "
        "`foreach=True` (or `fused=True` where the optimizer has it) updates them all in a few ops.",
        {"", fmt::format("create the optimizer stepped at {} with foreach=True (or fused=True)", at)}};
  }
  if (!group.via.empty()) {
    return {
        fmt::format(" torch.compile of the model would not touch them. Call `{}` once on a batch instead of once "
                    "per item, or torch.compile {}.",
                    group.via, compileTarget(group)),
        {"", fmt::format("call {} once on a batch at {}, or torch.compile {}", group.via, at, compileTarget(group))}};
  }
  if (!inLoop(group)) {
    return {fmt::format(" torch.compile of the model would not touch them: torch.compile {}, which traces it into a "
                        "graph as it does a model's forward.",
                        compileTarget(group)),
            {"", fmt::format("torch.compile {} ({})", compileTarget(group), at)}};
  }
  const auto ops = groupFrequentOps(census, group);
  std::vector<OpCensus::FrequentOp> repeated;
  std::copy_if(ops.begin(), ops.end(), std::back_inserter(repeated),
               [](const auto& op) { return op.count >= kLoopRepeats; });
  const bool stacks = std::any_of(ops.begin(), ops.end(), [](const auto& op) {
    return op.name.starts_with("aten::stack") || op.name.starts_with("aten::cat");
  });
  return {
      fmt::format(" torch.compile of the model would not touch them. Build the batch with batched ops: one call on "
                  "the whole batch in place of one per sample ({} here){}; or move the loop into a Dataset read by "
                  "a DataLoader with workers (num_workers > 0), so that it runs beside the step; or torch.compile "
                  "{}.",
                  frequentOpsText(repeated), stacks ? ", which also drops the torch.stack" : "", compileTarget(group)),
      {"", fmt::format("build the batch in {} ({}) with batched ops, or in a DataLoader with workers",
                       compileTarget(group), at)}};
}

std::string titleFor(const OpGroup& group) {
  if (group.context != SiteContext::kOutside) {
    return fmt::format("Eager step dispatch-bound: {} ops per step{}, torch.compile would fuse them", group.ops,
                       group.whole_step || group.via.empty() ? "" : fmt::format(" in `{}`", group.via));
  }
  if (inLoop(group) && group.via.empty()) {
    return fmt::format("Python loop dispatch-bound: {} small ops per step in `{}`, outside the model", group.ops,
                       group.function);
  }
  return fmt::format("Dispatch-bound outside the model: {} ops per step in `{}`", group.ops, group.function);
}

// The old form of a store without sites: the step's figures and where the model runs.
std::string wholeStepText(const OpCensus& census, const OpGroup& group) {
  if (census.model_file.empty()) {
    return group.file.empty() ? std::string{} : fmt::format(" The step ends at your line {}.", groupLocation(group));
  }
  const std::string model = census.model.empty() ? "the model" : fmt::format("`{}`", census.model);
  return fmt::format(" Your line {} calls {}, the step's first module.", groupLocation(group), model);
}

const char* contextName(SiteContext context) {
  switch (context) {
    case SiteContext::kModel: return "model";
    case SiteContext::kBackward: return "backward";
    case SiteContext::kOutside: break;
  }
  return "outside";
}

nlohmann::json issuedByEvidence(const OpGroup& group, double step_share, double overhead_s, double dispatch_s) {
  nlohmann::json lines = nlohmann::json::array();
  for (const CensusSite* site : group.sites) {
    lines.push_back({{"file", site->file}, {"line", site->line}, {"function", site->function}, {"ops", site->ops}});
  }
  std::int64_t backward_ops = 0;
  for (const CensusSite* site : group.backward) backward_ops += site->ops;
  return {{"context", contextName(group.context)},
          {"file", group.file},
          {"line", group.line},
          {"function", group.function},
          {"via", group.via},
          {"ops", group.ops},
          {"short_ops", group.short_ops},
          {"backward_ops", backward_ops},
          {"op_seconds", toSeconds(static_cast<double>(group.op_ns))},
          {"long_op_seconds", toSeconds(static_cast<double>(group.longOpNs()))},
          {"python_seconds", toSeconds(static_cast<double>(group.gap_ns))},
          {"overhead_seconds", toSeconds(static_cast<double>(group.overheadNs()))},
          {"overhead_share",
           group.timeNs() > 0 ? static_cast<double>(group.overheadNs()) / static_cast<double>(group.timeNs()) : 0.0},
          {"step_share", step_share},
          {"overhead_per_step_seconds", overhead_s},
          {"dispatch_per_step_seconds", dispatch_s},
          {"lines", std::move(lines)}};
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
  const base::Nanos long_op_ns = std::max<base::Nanos>(0, census.op_ns - census.short_op_ns);
  const double overhead_share =
      census.step_ns > 0
          ? std::clamp(1.0 - static_cast<double>(long_op_ns) / static_cast<double>(census.step_ns), 0.0, 1.0)
          : 0;
  if (census.ops < kCensusOpsPerStep || short_share < kCensusSmallOpShare || overhead_share < kDispatchBoundShare) {
    return {};
  }
  const double steady_total = measured_step ? facts.steady_step_total_s : step_s;
  const std::vector<OpGroup> groups =
      census.sites.empty() ? std::vector<OpGroup>{wholeStep(census)} : groupSites(census);
  base::Nanos sites_overhead_ns = 0;
  for (const auto& site : census.sites) sites_overhead_ns += site.gap_ns + site.short_op_ns;
  for (const OpGroup& group : groups) {
    const double group_short_share =
        group.ops > 0 ? static_cast<double>(group.short_ops) / static_cast<double>(group.ops) : 0;
    const double group_overhead_share =
        group.timeNs() > 0 ? static_cast<double>(group.overheadNs()) / static_cast<double>(group.timeNs()) : 0;
    if (group.ops < kCensusOpsPerStep || group_short_share < kCensusSmallOpShare ||
        group_overhead_share < kDispatchBoundShare) {
      continue;
    }
    // Of the step, the group's part of the time outside sizable ops: the step's share, split in proportion to the
    // sites' own (timing every op slows the counted step, about alike per op, so its times are not the step's).
    const double step_share =
        group.whole_step || sites_overhead_ns <= 0
            ? overhead_share
            : overhead_share * static_cast<double>(group.overheadNs()) / static_cast<double>(sites_overhead_ns);
    const double overhead_s = step_s * step_share;
    const double dispatch_s = static_cast<double>(group.ops) * op_cost_s;
    auto sampled = sampledShareText(context, group);
    if (!sampled) return sampled.error();
    const auto [advice, fix] = adviceFor(census, group);
    const std::string counted = fmt::format(
        "One step of this eager job (step {}, counted op by op) dispatched {} aten ops", census.step, census.ops);
    const std::string figures =
        fmt::format("about {} of the {} {} step (at about {} per op, dispatching {}alone is {})",
                    formatSeconds(overhead_s), formatSeconds(step_s), measured_step ? "steady-state" : "counted",
                    formatSeconds(op_cost_s), group.whole_step ? "" : "them ", formatSeconds(dispatch_s));
    std::string message;
    if (group.whole_step) {
      message = fmt::format(
          "{}, {} of them shorter than {} (most frequent: {}). Its sizable ops took {} of that step's {}: the other {} "
          "of the step goes to Python, autograd and launching small ops, not to computing, {}.{}{}{}",
          counted, census.short_ops, formatSeconds(toSeconds(static_cast<double>(census.short_op_threshold_ns))),
          frequentOpsText(census.frequent_ops), formatSeconds(toSeconds(static_cast<double>(long_op_ns))),
          formatSeconds(toSeconds(static_cast<double>(census.step_ns))), formatPercent(overhead_share), figures,
          wholeStepText(census, group), *sampled, advice);
    } else {
      const std::int64_t others = std::max<std::int64_t>(0, census.ops - group.ops);
      message = fmt::format(
          "{}; {} of them, {} shorter than {} (most frequent: {}), {}. With the Python between them they took {} of "
          "that step's {} (timing every op slows it), {} of it outside their sizable ops (Python, autograd and "
          "launching small ops, not computing): in proportion, {}.{}{}{}",
          counted, group.ops, group.short_ops,
          formatSeconds(toSeconds(static_cast<double>(census.short_op_threshold_ns))),
          frequentOpsText(groupFrequentOps(census, group)), issuedByText(group),
          formatSeconds(toSeconds(static_cast<double>(group.timeNs()))),
          formatSeconds(toSeconds(static_cast<double>(census.step_ns))),
          formatSeconds(toSeconds(static_cast<double>(group.overheadNs()))), figures,
          others > 0 ? fmt::format(" The step's other {} ops came from elsewhere and are not counted here.", others)
                     : std::string{},
          *sampled, advice);
    }
    Finding finding = makeFinding("compile/not-compiled", Severity::kWarning, titleFor(group), message, fix);
    finding.file = group.file;
    finding.line = group.line;
    finding.function = group.function;
    finding.count = group.ops;
    setImpact(finding, facts, steady_total * step_share * kOverheadRemoved);
    nlohmann::json evidence = {
        {"source", "op_census"},
        {"census_step", census.step},
        {"ops", census.ops},
        {"short_ops", census.short_ops},
        {"short_op_share", short_share},
        {"short_op_threshold_seconds", toSeconds(static_cast<double>(census.short_op_threshold_ns))},
        {"op_overhead_seconds", op_cost_s},
        {"op_overhead_measured", census.op_overhead_ns > 0},
        {"dispatch_per_step_seconds", static_cast<double>(census.ops) * op_cost_s},
        {"long_op_seconds", toSeconds(static_cast<double>(long_op_ns))},
        {"census_step_seconds", toSeconds(static_cast<double>(census.step_ns))},
        {"overhead_per_step_seconds", step_s * overhead_share},
        {"step_seconds", step_s},
        {"step_measured", measured_step},
        {"overhead_share", overhead_share},
        {"model", census.model}};
    if (!group.whole_step) evidence["issued_by"] = issuedByEvidence(group, step_share, overhead_s, dispatch_s);
    setEvidence(finding, std::move(evidence));
    out.push_back(std::move(finding));
  }
  return {};
}

}  // namespace torchscope::analyzer
