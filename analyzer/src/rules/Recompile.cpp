// recompile/*: code that torch.compile compiled again, by cause, at the user's line to change.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "../Locations.h"
#include "../Rules.h"
#include "RecompileAdvice.h"
#include "torchscope/base/JsonText.h"
#include "torchscope/store/Classify.h"

namespace torchscope::analyzer {

namespace {

// Below this share of the run, a recompile's compile time is not worth a finding, whatever its count.
constexpr double kMinimumRecompileFraction = 0.01;

using store::RecompileCauseKind;

RuleId ruleFor(RecompileCauseKind cause) {
  switch (cause) {
    case RecompileCauseKind::kDynamicShape: return "recompile/dynamic-shape";
    case RecompileCauseKind::kPythonScalar: return "recompile/python-scalar";
    case RecompileCauseKind::kDtypeDevice: return "recompile/dtype-device";
    case RecompileCauseKind::kGlobalState: return "recompile/global-state";
    case RecompileCauseKind::kTrainingFlag: return "recompile/training-flag";
    case RecompileCauseKind::kTypeOrIdentity: return "recompile/type-or-identity";
    case RecompileCauseKind::kOther: break;
  }
  return "recompile/other";
}

// Recompiles of one cause at one user line. Groups come in the order of their rule ids, as reports list them.
struct Key {
  RecompileCauseKind cause = RecompileCauseKind::kOther;
  std::string file;
  std::int64_t line = -1;
  RuleId rule() const { return ruleFor(cause); }
  bool operator<(const Key& other) const {
    const RuleId mine = rule();
    const RuleId theirs = other.rule();
    return std::tie(mine, file, line) < std::tie(theirs, other.file, other.line);
  }
};

// The line the user changes: the torch.compile call for sizes, where a guarded number is set for Python
// numbers, the call into the compiled code otherwise; the next known one when that one is unknown.
Location chooseLocation(const std::string& cause, const Location& entry, const Location& call_site,
                        const Location& value_source, const Location& user_frame) {
  std::vector<const Location*> order;
  if (cause == "dynamic-shape") {
    order = {&entry, &call_site, &user_frame};
  } else if (cause == "python-scalar") {
    order = {&value_source, &call_site, &entry, &user_frame};
  } else {
    order = {&call_site, &entry, &user_frame};
  }
  for (const Location* location : order) {
    if (location->known()) return *location;
  }
  return {};
}

// The guard texts of a guard_failures column, one per line.
std::string joinedGuards(const std::string& guard_failures) {
  const auto guards = base::parseJson(guard_failures);
  if (!guards.is_array()) return guard_failures;
  std::string joined;
  for (const auto& guard : guards)
    joined += (guard.is_string() ? guard.get<std::string>() : base::dumpJson(guard)) + "\n";
  return joined;
}

void addFrame(RecompileGroup& group, const Location& frame, bool library) {
  for (auto& known : group.frames) {
    if (known.frame == frame) {
      ++known.recompiles;
      return;
    }
  }
  group.frames.push_back({frame, library, 1});
}

nlohmann::json evidenceOf(const RecompileGroup& group) {
  nlohmann::json evidence = {{"frame", group.frames.empty() ? "" : group.frames.front().frame.function},
                             {"cause", group.cause},
                             {"detail", group.detail},
                             {"recompiles", group.count},
                             {"compile_seconds", group.compile_s},
                             {"limit_hit", group.limit_hit},
                             {"entry", locationJson(group.entry)},
                             {"call_site", locationJson(group.call_site)}};
  evidence["value_source"] = group.value_source.known()
                                 ? nlohmann::json{{"kind", group.value_kind}, {"file", group.value_source.file},
                                                  {"line", group.value_source.line}}
                                 : nlohmann::json(nullptr);
  // Said only for a framework's call (older goldens and readers know the other keys).
  if (group.framework_entry) evidence["framework_entry"] = libraryPackage(group.entry.file);
  evidence["frames"] = nlohmann::json::array();
  nlohmann::json library_frame = nullptr;
  for (const auto& frame : group.frames) {
    nlohmann::json entry = locationJson(frame.frame);
    entry["recompiles"] = frame.recompiles;
    entry["library"] = frame.library;
    evidence["frames"].push_back(entry);
    if (frame.library && library_frame.is_null()) library_frame = locationJson(frame.frame);
  }
  evidence["library_frame"] = library_frame;
  evidence["guard_failures"] = nlohmann::json::array();
  for (const auto& example : group.guard_examples) {
    auto parsed = base::parseJson(example);
    evidence["guard_failures"].push_back(parsed.is_discarded() ? nlohmann::json(example) : parsed);
  }
  return evidence;
}

Finding findingFor(RuleId rule, Severity severity, const RecompileAdvice& advice, const RecompileGroup& group,
                   const Facts& facts) {
  Finding finding = makeFinding(rule, severity, advice.title, advice.message, advice.fix);
  finding.recompile_cause = store::parseRecompileCause(group.cause);
  finding.file = group.location.file;
  finding.line = group.location.line;
  finding.function = group.location.function;
  setImpact(finding, facts, group.compile_s);
  setEvidence(finding, evidenceOf(group));
  return finding;
}

// The store's recompiles grouped by cause and user line, every row counted whatever it cost.
std::map<Key, RecompileGroup> groupRecompiles(const Context& context) {
  const Facts& facts = context.facts;
  std::map<Key, RecompileGroup> groups;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<store::RecompileCause>> earlier;  // pid, frame id
  for (const auto& recompile : facts.recompiles) {
    // The guard texts classified with the frame's history as the collector did: stores that kept no cause or
    // detail (imported, older) get them so, and every recompile the failure its message quotes.
    auto& frame_causes = earlier[{recompile.pid, recompile.frame_id}];
    const store::RecompileCause classified =
        store::classifyRecompileCause(joinedGuards(recompile.guard_failures), frame_causes,
                                      store::compileIdText(recompile.frame_id, recompile.frame_compile_id));
    frame_causes.push_back(classified);
    store::RecompileCause cause;
    cause.cause = recompile.cause;
    cause.detail = recompile.cause_detail;
    if (cause.cause.empty()) cause = classified;
    if (cause.cause == classified.cause) {
      if (cause.detail.empty()) cause.detail = classified.detail;
      if (cause.detail == classified.detail) cause.guard = classified.guard;
    }
    const Location frame{recompile.co_filename, recompile.co_firstlineno, displayFunction(recompile.co_name)};
    const bool library = !context.code.isUserFile(recompile.co_filename);
    const Location call_site = regionCallLocation(store::parseStack(recompile.stack), context.code);
    const Location entry = recompile.entry_file.empty() ? Location{} : Location{recompile.entry_file, recompile.entry_line, ""};
    // A framework's own torch.compile call (a Trainer, accelerate) is evidence; the user's line is their call.
    const bool framework_entry = entry.known() && !context.code.isUserFile(entry.file);
    const Location value =
        recompile.value_file.empty() ? Location{} : Location{recompile.value_file, recompile.value_line, ""};
    Location where = chooseLocation(cause.cause, framework_entry ? Location{} : entry, call_site, value,
                                    library ? Location{} : frame);
    // A store without stacks (an imported trace) knows the compiled frame only.
    if (!where.known()) where = frame;

    // A cause the classifier does not name (an imported store's) counts as other.
    const RecompileCauseKind kind = store::parseRecompileCause(cause.cause).value_or(RecompileCauseKind::kOther);
    RecompileGroup& group = groups[{kind, where.file, where.line}];
    if (group.count == 0) {
      group.cause = cause.cause;
      group.location = where;
    }
    if (group.detail.empty()) group.detail = cause.detail;
    if (group.guard.empty()) group.guard = cause.guard;
    if (!group.entry.known()) {
      group.entry = entry;
      group.framework_entry = framework_entry;
    }
    if (!group.call_site.known()) group.call_site = call_site;
    if (!group.value_source.known() && value.known()) {
      group.value_source = value;
      group.value_kind = recompile.value_kind;
    }
    ++group.count;
    group.limit_hit = group.limit_hit || recompile.limit_hit;
    group.compile_s += compileSeconds(facts, recompile.pid, recompile.frame_id, recompile.frame_compile_id);
    addFrame(group, frame, library);
    if (group.guard_examples.size() < 3) group.guard_examples.push_back(recompile.guard_failures);
  }
  return groups;
}

}  // namespace

Result<void> recompileRules(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  if (!facts.compiled && facts.recompiles.empty()) return {};
  auto groups = groupRecompiles(context);
  for (auto& [key, group] : groups) {
    std::stable_sort(group.frames.begin(), group.frames.end(),
                     [](const RecompiledFrame& a, const RecompiledFrame& b) { return a.recompiles > b.recompiles; });
    const RecompileAdvice advice = recompileAdvice(group, facts);
    // Impact, not count, decides: one recompile that takes half the run is reported, many cheap ones are not.
    if (facts.duration_s <= 0 || facts.fraction(group.compile_s) >= kMinimumRecompileFraction) {
      Finding finding = findingFor(key.rule(), Severity::kWarning, advice, group, facts);
      finding.count = group.count;
      out.push_back(std::move(finding));
    }
    if (group.limit_hit)
      out.push_back(findingFor("recompile/limit-hit", Severity::kError, limitAdvice(group, advice.fix), group, facts));
  }
  return {};
}

std::vector<Occurrence> recompileOccurrences(const Context& context) {
  std::vector<Occurrence> occurrences;
  for (const auto& [key, group] : groupRecompiles(context)) {
    occurrences.push_back({key.rule(), group.location.file, group.location.line, group.location.function, "",
                           group.detail.empty() ? group.cause : group.cause + ": " + group.detail, group.count,
                           group.compile_s});
  }
  return occurrences;
}

}  // namespace torchscope::analyzer
