// graph-break/*: where torch.compile had to split the graph, at the user's file:line, by cause.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <tuple>

#include "../Rules.h"
#include "torchscope/analyzer/FixIds.h"

namespace torchscope::analyzer {

namespace {

struct Cause {
  std::string_view id;
  FixProposal fix;
};

// Classifies torch's gb_type and the reason text; the first matching cause wins.
Cause classifyBreak(const std::string& break_type, const std::string& reason) {
  const std::string text = lowercase(break_type + "\n" + reason);
  static const std::regex kPrint(R"(\bprint\b|logging|logger|warnings\.warn)");
  if (containsAny(text, {"data-dependent branching", "data-dependent assertion", "generic_jump", "data dependent branch"})) {
    return {"data-dependent-branch",
            {fix::kRemoveDataDependentBranch,
             "replace the Python `if` on a tensor value by torch.where or torch.cond, or decide outside the compiled code"}};
  }
  if (containsAny(text, {"tensor.item()", "tolist", "capture_scalar_outputs", "data dependent operator",
                         "_local_scalar_dense"})) {
    return {"item",
            {fix::kCaptureScalarOutputs, "set torch._dynamo.config.capture_scalar_outputs = True, or keep the value as a tensor"}};
  }
  if (std::regex_search(text, kPrint)) {
    return {"print", {fix::kPrintOutOfCompiled, "move the print/logging call out of the compiled function"}};
  }
  if (containsAny(text, {"dynamic shape operator", "data-dependent output shape", "nonzero", "masked_select",
                         "boolean mask", "capture_dynamic_output_shape_ops"})) {
    return {"dynamic-output-shape",
            {fix::kCaptureDynamicOutputShapeOps,
             "set torch._dynamo.config.capture_dynamic_output_shape_ops = True, or use a static-shape alternative "
             "(torch.where instead of a boolean mask)"}};
  }
  if (containsAny(text, {"key type for nn.module.__getitem__", "non-const argument in nn.module __getitem__",
                         "tuple key", "moduledict"})) {
    return {"unsupported-call",
            {fix::kTupleKeysToStr, "use string keys instead of tuple keys in ModuleDict/ParameterDict"}};
  }
  if (containsAny(text, {"unsupported", "skipped", "skip calling", "unimplemented", "failed to trace builtin",
                         "not supported", "call_function"})) {
    return {"unsupported-call",
            {"", "wrap the call in a custom op (torch.library.custom_op), mark it allow_in_graph, or move it out of "
                 "the compiled region"}};
  }
  return {"other", {"", "read torch's explanation in the evidence; TORCH_LOGS=graph_breaks shows the full trace"}};
}

double resumeCompileSeconds(const Facts& facts, const std::string& function, std::int64_t line) {
  const std::string resume = fmt::format("torch_dynamo_resume_in_{}_at_{}", function, line);
  double seconds = 0;
  for (const auto& compile : facts.compiles) {
    if (compile.co_name == resume) seconds += toSeconds(static_cast<double>(std::max<store::Nanos>(0, compile.end_ns - compile.start_ns)));
  }
  return seconds;
}

struct Site {
  std::string rule;
  std::string file;
  std::int64_t line = -1;
  std::string function;
  bool operator<(const Site& other) const {
    return std::tie(rule, file, line, function) < std::tie(other.rule, other.file, other.line, other.function);
  }
};

struct Group {
  std::int64_t count = 0;
  double compile_s = 0;
  FixProposal fix;
  std::vector<nlohmann::json> breaks;  // distinct (type, reason) seen here
};

}  // namespace

Result<void> graphBreakRules(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  if (facts.count("graph_breaks") == 0) return {};

  // Blocked sync time per user line: an item() or nonzero break also syncs there at run time.
  std::map<std::pair<std::string, std::int64_t>, double> sync_seconds;
  auto synced = context.reader.query(
      "SELECT s.value, t.line, t.ns FROM (SELECT file_id, line, sum(end_ns - start_ns) AS ns FROM syncs "
      "GROUP BY file_id, line) t JOIN strings s ON s.id = t.file_id",
      [&](const store::Row& row) { sync_seconds[{row.text(0), row.integer(1)}] = toSeconds(row.real(2)); });
  if (!synced) return synced.error();

  std::map<Site, Group> groups;
  auto grouped = context.reader.query(
      // Each break gets an equal share of its compilation's time, so that breaks of one frame are not counted twice.
      "SELECT g.break_type, g.reason, g.file, g.line, g.function, count(*), sum(coalesce(c.ns * 1.0 / n.breaks, 0)), "
      "min(g.explanation) FROM graph_breaks g LEFT JOIN (SELECT pid, frame_id, frame_compile_id, "
      "sum(end_ns - start_ns) AS ns FROM compiles GROUP BY pid, frame_id, frame_compile_id) c "
      "ON c.pid = g.pid AND c.frame_id = g.frame_id AND c.frame_compile_id = g.frame_compile_id "
      "LEFT JOIN (SELECT pid, frame_id, frame_compile_id, count(*) AS breaks FROM graph_breaks "
      "GROUP BY pid, frame_id, frame_compile_id) n "
      "ON n.pid = g.pid AND n.frame_id = g.frame_id AND n.frame_compile_id = g.frame_compile_id "
      "GROUP BY g.break_type, g.reason, g.file, g.line, g.function",
      [&](const store::Row& row) {
        const Cause cause = classifyBreak(row.text(0), row.text(1));
        Group& group = groups[{"graph-break/" + std::string(cause.id), row.text(2), row.integer(3), row.text(4)}];
        group.count += row.integer(5);
        group.compile_s += toSeconds(row.real(6));
        group.fix = cause.fix;
        if (group.breaks.size() < 5) {
          group.breaks.push_back({{"break_type", row.text(0)}, {"reason", row.text(1)}, {"explanation", row.text(7)},
                                  {"count", row.integer(5)}});
        }
      });
  if (!grouped) return grouped.error();

  for (const auto& [site, group] : groups) {
    const auto sync = sync_seconds.find({site.file, site.line});
    const double blocked_s = sync == sync_seconds.end() ? 0 : sync->second;
    // The code after a break is compiled as its own frame, "torch_dynamo_resume_in_<function>_at_<line>": that
    // compile time is what the break costs. Without such frames, the break's share of its compilation stands in.
    const double resume_s = resumeCompileSeconds(facts, site.function, site.line);
    const double compile_s = resume_s > 0 ? resume_s : group.compile_s;
    const std::string& first_type = group.breaks.front()["break_type"].get_ref<const std::string&>();
    Finding finding = makeFinding(
        site.rule, "warning",
        fmt::format("Graph break at {}: {}", formatLocation(site.file, site.line).empty() ? "unknown line"
                                                                                          : formatLocation(site.file, site.line),
                    first_type),
        fmt::format("torch.compile split the graph {} time(s) here ({}). Each break returns to Python, ends "
                    "fusion across it and adds guards; {} {}{}.",
                    group.count, first_type,
                    resume_s > 0 ? "compiling the code after it took" : "its share of the compile time is",
                    formatSeconds(compile_s),
                    blocked_s > 0 ? fmt::format(" and the line blocked the host {} in syncs", formatSeconds(blocked_s)) : ""),
        group.fix);
    finding.file = site.file;
    finding.line = site.line;
    finding.function = site.function;
    finding.count = group.count;
    setImpact(finding, facts, compile_s + blocked_s);
    setEvidence(finding, {{"breaks", group.breaks},
                          {"compile_seconds", compile_s},
                          {"resume_compile_seconds", resume_s},
                          {"sync_seconds", blocked_s}});
    out.push_back(std::move(finding));
  }
  return {};
}

}  // namespace torchscope::analyzer
