// graph-break/*: where torch.compile had to split the graph, at the user's file:line, by cause.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <tuple>

#include "../Locations.h"
#include "../Rules.h"
#include "GraphBreakAdvice.h"
#include "torchscope/analyzer/FixIds.h"
#include "torchscope/base/Saturating.h"

namespace torchscope::analyzer {

namespace {

// Classifies torch's gb_type and the reason text; the first matching cause wins.
BreakCause classifyBreak(const std::string& break_type, const std::string& reason) {
  const std::string text = lowercase(break_type + "\n" + reason);
  // "logger" alone would also take the C++ Logger objects of torch.distributed for the logging module. torch 2.13
  // names warnings.warn as the skipped builtin "module: _warnings, qualname: warn".
  static const std::regex kPrint(
      R"(\bprint\b|logging|\blogger\.(debug|info|warning|warn|error|critical|exception|log)\b|warnings\.warn)"
      R"(|module: _warnings, qualname: warn\b)");
  if (containsAny(text, {"data-dependent branching", "data-dependent assertion", "generic_jump", "data dependent branch"})) {
    return {"graph-break/data-dependent-branch",
            {fix::kRemoveDataDependentBranch,
             "replace the Python `if` on a tensor value by torch.where or torch.cond, or decide outside the compiled "
             "code"}};
  }
  if (containsAny(text, {"tensor.item()", "tolist", "capture_scalar_outputs", "data dependent operator",
                         "_local_scalar_dense"})) {
    return {"graph-break/item",
            {fix::kCaptureScalarOutputs,
             "set torch._dynamo.config.capture_scalar_outputs = True, or keep the value as a tensor"}};
  }
  if (std::regex_search(text, kPrint)) {
    return {"graph-break/print",
            {fix::kPrintOutOfCompiled, "move the print/logging call out of the compiled function"}};
  }
  if (containsAny(text, {"dynamic shape operator", "data-dependent output shape", "nonzero", "masked_select",
                         "boolean mask", "capture_dynamic_output_shape_ops"})) {
    return {"graph-break/dynamic-output-shape",
            {fix::kCaptureDynamicOutputShapeOps,
             "set torch._dynamo.config.capture_dynamic_output_shape_ops = True, or use a static-shape alternative "
             "(torch.where instead of a boolean mask)"}};
  }
  if (containsAny(text, {"key type for nn.module.__getitem__", "non-const argument in nn.module __getitem__",
                         "tuple key", "moduledict"})) {
    return {"graph-break/unsupported-call",
            {fix::kTupleKeysToStr, "use string keys instead of tuple keys in ModuleDict/ParameterDict"}};
  }
  if (containsAny(text, {"unsupported", "skipped", "skip calling", "unimplemented", "failed to trace builtin",
                         "not supported", "call_function"})) {
    return {"graph-break/unsupported-call",
            {"",
             "wrap the call in a custom op (torch.library.custom_op), mark it allow_in_graph, or move it out of "
             "the compiled region"}};
  }
  return {"graph-break/other",
          {"", "read torch's explanation in the evidence; TORCH_LOGS=graph_breaks shows the full trace"}};
}

double resumeCompileSeconds(const Facts& facts, const std::string& function, std::int64_t line) {
  const std::string resume = fmt::format("torch_dynamo_resume_in_{}_at_{}", function, line);
  double seconds = 0;
  for (const auto& compile : facts.compiles) {
    if (compile.co_name == resume)
      seconds += toSeconds(static_cast<double>(base::spanNanos(compile.start_ns, compile.end_ns)));
  }
  return seconds;
}

using CompileKey = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // pid, frame id, frame compile id

struct Site {
  RuleId rule;
  std::string file;
  std::int64_t line = -1;
  bool operator<(const Site& other) const {
    return std::tie(rule, file, line) < std::tie(other.rule, other.file, other.line);
  }
};

// One break as the rules see it: where in the user's code, and torch's own site when that is elsewhere.
struct Located {
  const store::GraphBreak* row = nullptr;
  std::vector<store::SourceFrame> stack;
  Location where;
  Location library_site;
};

Located locate(const store::GraphBreak& row, const store::CodeRoots& code) {
  Located located{&row, store::parseStack(row.stack), {}, {}};
  if (located.stack.empty()) located.stack = store::parseStack(row.user_stack);  // stores from before v2 imports
  located.where = innermostUserLocation(located.stack, code);
  if (!located.where.known()) located.where = {row.file, row.line, displayFunction(row.function)};
  located.library_site = libraryFrame(located.stack, code);
  if (!located.library_site.known() && !row.file.empty() && !code.isUserFile(row.file)) {
    located.library_site = {row.file, row.line, displayFunction(row.function)};
  }
  return located;
}

bool isComprehension(std::string_view function) {
  return function == "<dictcomp>" || function == "<listcomp>" || function == "<setcomp>" || function == "<genexpr>";
}

// The break that torch could not resume after at `where`: a break whose stack passes through that line.
const Located* earlierBreak(const std::vector<Located>& breaks, const Location& where) {
  for (const auto& candidate : breaks) {
    if (candidate.row->frame_skipped || candidate.where == where) continue;
    for (const auto& frame : candidate.stack) {
      if (frame.file == where.file && frame.line == where.line) return &candidate;
    }
  }
  return nullptr;
}

// The store's graph breaks grouped by rule and user line, every row counted whatever it cost.
Result<std::map<Site, BreakGroup>> groupBreaks(const Context& context) {
  const Facts& facts = context.facts;
  std::map<Site, BreakGroup> groups;
  if (facts.count("graph_breaks") == 0) return groups;
  auto rows = context.reader.load<store::GraphBreak>();
  if (!rows) return rows.error();
  // Each break gets an equal share of its compilation's time, so that breaks of one frame are not counted twice.
  std::map<CompileKey, double> compile_seconds;
  for (const auto& compile : facts.compiles) {
    compile_seconds[{compile.pid, compile.frame_id, compile.frame_compile_id}] +=
        toSeconds(static_cast<double>(base::spanNanos(compile.start_ns, compile.end_ns)));
  }
  std::map<CompileKey, int> breaks_per_compile;
  for (const auto& row : *rows) ++breaks_per_compile[{row.pid, row.frame_id, row.frame_compile_id}];

  std::vector<Located> breaks;
  breaks.reserve(rows->size());
  for (const auto& row : *rows) breaks.push_back(locate(row, context.code));

  for (const auto& located : breaks) {
    const store::GraphBreak& row = *located.row;
    const Designed designed = designedBreak(row, located.library_site);
    BreakCause cause = designed != Designed::kNo ? BreakCause{"graph-break/torch-designed", {}}
                       : row.frame_skipped       ? BreakCause{"graph-break/eager-fallback", {}}
                                                 : classifyBreak(row.break_type, row.reason);
    BreakGroup& group = groups[{cause.rule, located.where.file, located.where.line}];
    if (group.count == 0) {
      group.where = located.where;
      group.fix = cause.fix;
      group.library_site = located.library_site;
    }
    if (designed != Designed::kNo) {
      group.designed_kinds.insert(designed);
      if (located.library_site.known()) group.designed_sites.emplace(designed, located.library_site);
    }
    ++group.count;
    const CompileKey key{row.pid, row.frame_id, row.frame_compile_id};
    if (const auto found = compile_seconds.find(key); found != compile_seconds.end()) {
      group.compile_s += found->second / breaks_per_compile[key];
    }
    group.in_comprehension = group.in_comprehension || isComprehension(row.function) ||
                             std::any_of(located.stack.begin(), located.stack.end(), [&](const store::SourceFrame& frame) {
                               return frame.file == located.where.file && frame.line == located.where.line &&
                                      isComprehension(frame.function);
                             });
    group.addBreak(row);
    if (row.frame_skipped && !group.caused_by.known()) {
      if (const Located* earlier = earlierBreak(breaks, located.where)) {
        group.caused_by = earlier->where;
        group.caused_by_type = earlier->row->break_type;
      }
    }
  }

  const bool no_graph = compiledNoGraph(facts.compiles);
  for (auto& [site, group] : groups) {
    group.run_compiled_no_graph = no_graph;
    // The code after a break is compiled as its own frame, "torch_dynamo_resume_in_<function>_at_<line>", once per
    // frame that broke there and again at each recompile.
    group.resume_s = resumeCompileSeconds(facts, group.where.function, group.where.line);
  }
  // An eager fallback is the cause's cost too: without the break torch would have compiled that frame whole.
  for (const auto& [site, group] : groups) {
    if (site.rule != "graph-break/eager-fallback" || !group.caused_by.known()) continue;
    for (auto& [cause_site, cause] : groups) {
      if (cause_site.rule != "graph-break/eager-fallback" && cause.where == group.caused_by) {
        cause.fallback_s += group.costSeconds();
        break;
      }
    }
  }
  return groups;
}

}  // namespace

Result<void> graphBreakRules(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  if (facts.count("graph_breaks") == 0) return {};

  // Blocked sync time per user line: an item() or nonzero break also syncs there at run time.
  std::map<std::pair<std::string, std::int64_t>, double> sync_seconds;
  auto synced = context.reader.query(
      "SELECT s.value, t.line, t.ns FROM (SELECT file_id, line, total(max(end_ns - start_ns, 0)) AS ns FROM syncs "
      "GROUP BY file_id, line) t JOIN strings s ON s.id = t.file_id",
      [&](const store::Row& row) { sync_seconds[{row.text(0), row.integer(1)}] = toSeconds(row.real(2)); });
  if (!synced) return synced.error();

  auto groups = groupBreaks(context);
  if (!groups) return groups.error();
  for (auto& [site, group] : *groups) {
    const auto sync = sync_seconds.find({site.file, site.line});
    group.sync_s = sync == sync_seconds.end() ? 0 : sync->second;
    const BreakAdvice advice = breakAdvice(site.rule, group);
    Finding finding = makeFinding(site.rule, advice.severity, advice.title, advice.message, advice.fix);
    finding.file = group.where.file;
    finding.line = group.where.line;
    finding.function = group.where.function;
    finding.count = group.count;
    setImpact(finding, facts, group.costSeconds() + group.sync_s);
    setEvidence(finding, group.evidence());
    out.push_back(std::move(finding));
  }
  return {};
}

Result<std::vector<Occurrence>> graphBreakOccurrences(const Context& context) {
  auto groups = groupBreaks(context);
  if (!groups) return groups.error();
  std::vector<Occurrence> occurrences;
  for (const auto& [site, group] : *groups) {
    for (const auto& [registry_id, kind] : group.by_registry_id) {
      // The group's cost, shared among its kinds by count.
      const double share = static_cast<double>(kind.count) / static_cast<double>(group.count);
      occurrences.push_back({site.rule, group.where.file, group.where.line, group.where.function, registry_id,
                             kind.break_type, kind.count, group.costSeconds() * share});
    }
  }
  return occurrences;
}

}  // namespace torchscope::analyzer
