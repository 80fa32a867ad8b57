#include "GraphBreakAdvice.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "RecompileAdvice.h"
#include "torchscope/analyzer/FixIds.h"
#include "torchscope/base/JsonText.h"

namespace torchscope::analyzer {

namespace {

constexpr std::size_t kMaxKinds = 5;

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Up to the first full stop that ends a sentence ("e.g. `if x:`" does not), with a full stop.
std::string firstSentence(const std::string& text) {
  for (auto end = text.find(". "); end != std::string::npos; end = text.find(". ", end + 1)) {
    const std::string_view before = std::string_view(text).substr(0, end);
    if (!endsWith(before, "e.g") && !endsWith(before, "i.e") && !endsWith(before, "etc") && !endsWith(before, "vs")) {
      return text.substr(0, end + 1);
    }
  }
  if (text.empty() || endsWith(text, ".") || endsWith(text, "!") || endsWith(text, "?")) return text;
  return text + ".";
}

std::string typeOf(const nlohmann::json& kind) { return kind.value("break_type", std::string()); }

// "Data-dependent branching" or "Reconstruction failure and 1 more kind"
std::string typesText(const BreakGroup& group) {
  if (group.breaks.empty()) return "a graph break";
  std::string text = typeOf(group.breaks.front());
  if (group.breaks.size() > 1) {
    text += fmt::format(" and {} more kind{}", group.breaks.size() - 1, group.breaks.size() == 2 ? "" : "s");
  }
  return text;
}

std::string costText(const BreakGroup& group) {
  std::vector<std::string> parts;
  if (group.compile_s > 0) parts.push_back(formatSeconds(group.compile_s) + " in the compilations that broke here");
  if (group.resume_s > 0) parts.push_back(formatSeconds(group.resume_s) + " compiling the code after it");
  if (group.fallback_s > 0) {
    parts.push_back(formatSeconds(group.fallback_s) + " in the frames torch could not resume after it");
  }
  return fmt::format(
      "the break cost {} of compilation{}{}", formatSeconds(group.costSeconds()),
      parts.size() > 1 ? fmt::format(" ({})", fmt::join(parts, ", ")) : "",
      group.sync_s > 0 ? fmt::format(" and the line blocked the host {} in syncs", formatSeconds(group.sync_s)) : "");
}

std::string optimizerGradModeText(const BreakGroup& group) {
  return fmt::format("torch.optim's `_use_grad`{} calls torch._dynamo.graph_break() around the parameter update so "
                     "that the update is compiled as an inference graph that updates the parameters in place "
                     "(pytorch#104053); the update itself is still compiled.",
                     group.designed_sites.count(Designed::kOptimizerGradMode)
                         ? " (" + describe(group.designed_sites.at(Designed::kOptimizerGradMode)) + ")"
                         : "");
}

std::string schedulerWrapperText(const BreakGroup& group) {
  return fmt::format("An LR scheduler replaces optimizer.step with a wrapper (torch/optim/lr_scheduler.py) that "
                     "torch.compile skips on purpose, so the graph breaks before the step{} and the step itself is "
                     "compiled as a frame of its own.",
                     group.designed_sites.count(Designed::kSchedulerWrapper)
                         ? " (" + describe(group.designed_sites.at(Designed::kSchedulerWrapper)) + ")"
                         : "");
}

// Compiling a DistributedDataParallel module: DDP's forward is not traced on purpose. Whether the module inside it
// was compiled after that shows in the run's graph counts (with torch 2.13 on the CPU it was not).
BreakAdvice ddpForwardAdvice(const BreakGroup& group) {
  const std::string where = formatLocation(group.where.file, group.where.line);
  const std::string breaks = fmt::format(
      "DDP's own forward breaks the graph ({} at {}): its bookkeeping before the step and `_inside_ddp_forward`, "
      "which torch excludes from tracing on purpose, run in Python.",
      times(group.count), describe(group.where));
  const FixProposal wrap_compiled{"", "compile the module before wrapping it: model = DDP(torch.compile(model)); DDP "
                                      "then runs the compiled module, split at the gradient buckets so that the "
                                      "all-reduce overlaps the backward"};
  if (group.run_compiled_no_graph) {
    return {Severity::kWarning,
            fmt::format("torch.compile of the DistributedDataParallel module at {} compiled no graph: the model ran "
                        "eagerly",
                        where),
            breaks +
                " The module it wraps was not compiled after them: none of the run's compilations produced a "
                "graph, so the compile time bought nothing.",
            wrap_compiled};
  }
  return {Severity::kInfo,
          fmt::format("torch keeps DistributedDataParallel's own forward out of the graph, called at {}", where),
          breaks +
              " These breaks are torch's, not your code's, and cost compile time around DDP's forward; the "
              "run also compiled graphs.",
          {"",
           "nothing to change; compiling the module before wrapping it (model = DDP(torch.compile(model))) "
           "compiles the same module without these breaks"}};
}

BreakAdvice designedAdvice(const BreakGroup& group) {
  const std::string where = formatLocation(group.where.file, group.where.line);
  if (group.designed_kinds.count(Designed::kDdpForward) > 0 && group.designed_kinds.size() == 1) {
    return ddpForwardAdvice(group);
  }
  const bool grad_mode = group.designed_kinds.count(Designed::kOptimizerGradMode) > 0;
  const bool scheduler = group.designed_kinds.count(Designed::kSchedulerWrapper) > 0;
  if (grad_mode || scheduler) {
    std::string explanation;
    if (scheduler) explanation += " " + schedulerWrapperText(group);
    if (grad_mode) explanation += " " + optimizerGradModeText(group);
    const FixProposal fix =
        scheduler ? FixProposal{"", "nothing to change for these breaks; as torch's 'compiled optimizer with an LR "
                                    "scheduler' tutorial does, create the optimizer with a tensor learning rate "
                                    "(lr=torch.tensor(0.01)) and compile a function that calls opt.step() and "
                                    "scheduler.step() with torch.compile(fullgraph=False)"}
                  : FixProposal{"", "nothing to change; keep compiling the step as torch's 'Compiling the optimizer' "
                                    "tutorial does: a function that calls opt.step(), compiled with "
                                    "torch.compile(fullgraph=False)"};
    return {Severity::kInfo,
            fmt::format("torch breaks the graph on purpose in the compiled optimizer step at {}", where),
            fmt::format("{} torch's, not your code's ({} at {}).{}",
                        group.count == 1 ? "This graph break is" : "These graph breaks are", times(group.count),
                        describe(group.where), explanation),
            fix};
  }
  const auto site = group.designed_sites.find(Designed::kTorchGraphBreak);
  return {Severity::kInfo,
          fmt::format("torch breaks the graph on purpose in its own code, called at {}", where),
          fmt::format("torch's own code calls torch._dynamo.graph_break(){}; the call at {} reaches it {}. The break "
                      "is torch's choice, not a problem in your code.",
                      site != group.designed_sites.end() ? " at " + describe(site->second) : "", describe(group.where),
                      times(group.count)),
          {"", "nothing to change in your code"}};
}

BreakAdvice eagerFallbackAdvice(const BreakGroup& group) {
  const std::string where = formatLocation(group.where.file, group.where.line);
  const std::string earlier =
      group.caused_by.known()
          ? fmt::format("the graph break at {} ({})", formatLocation(group.caused_by.file, group.caused_by.line),
                        group.caused_by_type)
          : "an earlier graph break";
  std::string fix = group.caused_by.known()
                        ? fmt::format("remove the graph break at {}", formatLocation(group.caused_by.file, group.caused_by.line))
                        : "remove the earlier graph break";
  if (group.in_comprehension) fix += fmt::format(", or write the comprehension at {} as a for loop, which torch.compile can resume after a break", where);
  return {
      Severity::kWarning,
      fmt::format("`{}` runs eagerly from {}: torch.compile could not resume after a graph break", group.where.function,
                  where),
      fmt::format(
          "After {}, torch.compile could not resume at {} ({}) and ran the rest of `{}` without compiling "
          "it ({}).{} {}.",
          earlier, where, typesText(group), group.where.function, times(group.count),
          group.in_comprehension ? " A break inside a comprehension or generator expression cannot be resumed." : "",
          "Besides the lost compilation, " + costText(group)),
      {"", fix}};
}

}  // namespace

std::string registryId(const store::GraphBreak& row) { return row.gb_id.empty() ? row.break_type : row.gb_id; }

Designed designedBreak(const store::GraphBreak& row, const Location& library_site) {
  const std::string text = lowercase(row.break_type + "\n" + row.reason + "\n" + row.explanation);
  if (containsAny(text, {"skip"}) && containsAny(text, {"lr_scheduler.py"})) {
    return Designed::kSchedulerWrapper;
  }
  // DDP.forward's pre-forward calls (its C++ Logger) and its `_inside_ddp_forward` context are not traced.
  if (row.stack.find("/torch/nn/parallel/distributed.py") != std::string::npos) return Designed::kDdpForward;
  const bool graph_break_call = containsAny(text, {"torch._dynamo.graph_break()"});
  if (!graph_break_call || !library_site.known() || library_site.file.find("/torch/") == std::string::npos) {
    return Designed::kNo;
  }
  if (library_site.function == "_use_grad" || endsWith(library_site.file, "/torch/optim/optimizer.py")) {
    return Designed::kOptimizerGradMode;
  }
  return Designed::kTorchGraphBreak;
}

void BreakGroup::addBreak(const store::GraphBreak& row) {
  auto& registered = by_registry_id[registryId(row)];
  registered.break_type = row.break_type;
  ++registered.count;
  for (auto& kind : breaks) {
    if (typeOf(kind) == row.break_type && kind.value("reason", std::string()) == row.reason) {
      kind["count"] = kind["count"].get<std::int64_t>() + 1;
      return;
    }
  }
  if (breaks.size() >= kMaxKinds) return;
  auto hints = base::parseJson(row.hints);
  breaks.push_back({{"break_type", row.break_type},
                    {"gb_id", row.gb_id},
                    {"reason", row.reason},
                    {"explanation", row.explanation},
                    {"hints", hints.is_array() ? hints : nlohmann::json::array()},
                    {"frame_skipped", row.frame_skipped},
                    {"count", 1}});
}

nlohmann::json BreakGroup::evidence() const {
  return {{"breaks", breaks},
          {"compile_seconds", costSeconds()},
          {"broken_compile_seconds", compile_s},
          {"resume_compile_seconds", resume_s},
          {"fallback_compile_seconds", fallback_s},
          {"sync_seconds", sync_s},
          {"library_frame", locationJson(library_site)},
          {"caused_by", locationJson(caused_by)}};
}

BreakAdvice breakAdvice(RuleId rule, const BreakGroup& group) {
  if (rule == "graph-break/torch-designed") return designedAdvice(group);
  if (rule == "graph-break/eager-fallback") return eagerFallbackAdvice(group);
  const std::string where = group.where.known() ? formatLocation(group.where.file, group.where.line) : "an unknown line";
  const std::string explanation =
      group.breaks.empty() ? "" : firstSentence(group.breaks.front().value("explanation", std::string()));
  // A break inside a framework's code (transformers' logging under a Trainer): a source edit of the user's files
  // cannot reach it, and the user's line is only the call that led there.
  const std::string package = group.library_site.known() ? libraryPackage(group.library_site.file) : "";
  const bool in_framework = !package.empty() && package != "torch";
  FixProposal fix = group.fix;
  std::string inside;
  if (in_framework) {
    inside =
        fmt::format(" The break is inside {} at {}, reached from your line.", package, describe(group.library_site));
    if (fix::kindOf(fix.id) == fix::kSource) {
      fix = {"", fmt::format("the code that breaks is in {} ({}), not a line of yours: leave it (torch.compile runs it "
                             "in Python between two graphs), or update {} if a newer release avoids it",
                             package, formatLocation(group.library_site.file, group.library_site.line), package)};
    }
  }
  return {Severity::kWarning, fmt::format("Graph break at {}: {}", where, typesText(group)),
          fmt::format("torch.compile split the graph here {}: {}.{}{} Each break returns to Python, ends fusion across "
                      "it and adds guards; {}.",
                      times(group.count), typesText(group), explanation.empty() ? "" : " " + explanation, inside,
                      costText(group)),
          fix};
}

}  // namespace torchscope::analyzer
