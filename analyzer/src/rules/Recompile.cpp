// recompile/*: frames that torch.compile compiled again and again, grouped by frame and cause.
#include <fmt/format.h>

#include <map>
#include <tuple>

#include "../Rules.h"
#include "torchscope/analyzer/FixIds.h"

namespace torchscope::analyzer {

namespace {

struct FrameCause {
  std::string file;
  std::int64_t line = -1;
  std::string function;
  std::string cause;
  bool operator<(const FrameCause& other) const {
    return std::tie(file, line, function, cause) < std::tie(other.file, other.line, other.function, other.cause);
  }
};

struct Group {
  std::int64_t count = 0;
  bool limit_hit = false;
  double compile_s = 0;
  std::vector<std::string> examples;  // guard failure texts, first few
  bool mentions_lr = false;
};

std::string ruleFor(const std::string& cause) {
  if (cause == "dynamic-shape") return "recompile/dynamic-shape";
  if (cause == "python-scalar") return "recompile/python-scalar";
  return "recompile/other";
}

FixProposal fixFor(const std::string& cause, bool mentions_lr) {
  if (cause == "dynamic-shape") {
    return {fix::kDynamicShapes, "compile with dynamic=True (or mark the varying dimension with torch._dynamo.mark_dynamic)"};
  }
  if (cause == "python-scalar" && mentions_lr) {
    return {fix::kTensorLr, "pass the learning rate as a tensor, e.g. Adam(params, lr=torch.tensor(1e-3))"};
  }
  if (cause == "python-scalar") {
    return {fix::kDynamicShapes, "pass the changing Python number as a tensor, or compile with dynamic=True"};
  }
  return {"", "read the guard failures in the evidence and keep the guarded value stable between calls"};
}

// A single recompile for a new shape is what automatic dynamic shapes expects; two or more are a pattern.
std::int64_t minimumCount(const std::string& cause) { return cause == "python-scalar" ? 1 : 2; }

}  // namespace

Result<void> recompileRules(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  if (!facts.compiled && facts.recompiles.empty()) return {};
  std::map<FrameCause, Group> groups;
  for (const auto& recompile : facts.recompiles) {
    const std::string cause = recompile.cause == "dynamic-shape" || recompile.cause == "python-scalar" ? recompile.cause : "other";
    Group& group = groups[{recompile.co_filename, recompile.co_firstlineno, recompile.co_name, cause}];
    ++group.count;
    group.limit_hit = group.limit_hit || recompile.limit_hit;
    group.compile_s += compileSeconds(facts, recompile.pid, recompile.frame_id, recompile.frame_compile_id);
    if (group.examples.size() < 3) group.examples.push_back(recompile.guard_failures);
    group.mentions_lr = group.mentions_lr || containsAny(recompile.guard_failures, {"'lr'", "param_groups", "\"lr\""});
  }

  for (const auto& [where, group] : groups) {
    const FixProposal fix = fixFor(where.cause, group.mentions_lr);
    nlohmann::json evidence = {{"frame", where.function},  {"cause", where.cause},
                               {"recompiles", group.count}, {"compile_seconds", group.compile_s},
                               {"limit_hit", group.limit_hit}};
    evidence["guard_failures"] = nlohmann::json::array();
    for (const auto& example : group.examples) {
      auto parsed = nlohmann::json::parse(example, nullptr, false);
      evidence["guard_failures"].push_back(parsed.is_discarded() ? nlohmann::json(example) : parsed);
    }
    const std::string where_text = formatLocation(where.file, where.line);
    if (group.count >= minimumCount(where.cause)) {
      Finding finding = makeFinding(
          ruleFor(where.cause), "warning", fmt::format("{} recompiled {} times ({})", where.function, group.count, where.cause),
          fmt::format("torch.compile compiled '{}' ({}) {} more times because a guard failed ({}); each recompile "
                      "costs compile time ({} in total here).",
                      where.function, where_text, group.count, where.cause, formatSeconds(group.compile_s)),
          fix);
      finding.file = where.file;
      finding.line = where.line;
      finding.function = where.function;
      finding.count = group.count;
      setImpact(finding, facts, group.compile_s);
      setEvidence(finding, evidence);
      out.push_back(std::move(finding));
    }
    if (group.limit_hit) {
      Finding finding = makeFinding(
          "recompile/limit-hit", "error", fmt::format("{} hit the recompile limit and now runs eagerly", where.function),
          fmt::format("'{}' ({}) recompiled until torch.compile's recompile limit was hit (cause: {}); from then on "
                      "the frame runs without compilation. Remove the cause rather than raising the limit.",
                      where.function, where_text, where.cause),
          fix);
      finding.file = where.file;
      finding.line = where.line;
      finding.function = where.function;
      finding.count = 1;
      setImpact(finding, facts, group.compile_s);
      setEvidence(finding, evidence);
      out.push_back(std::move(finding));
    }
  }
  return {};
}

}  // namespace torchscope::analyzer
