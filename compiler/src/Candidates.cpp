#include "Candidates.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "torchscope/analyzer/Finding.h"
#include "torchscope/compiler/Process.h"
#include "torchscope/store/Reader.h"

namespace torchscope::compiler {
namespace {

struct FindingFix {
  std::string fix_id;
  std::string rule;
  std::string file;
  std::int64_t line = -1;
  double impact_fraction = -1;
};

std::vector<FindingFix> fixesFromStore(const std::string& path) {
  std::vector<FindingFix> fixes;
  auto reader = store::Reader::open(path);
  if (!reader) return fixes;
  auto findings = analyzer::loadFindings(**reader);
  if (!findings) return fixes;
  for (const auto& finding : *findings) {
    if (!finding.fix_id.empty()) {
      fixes.push_back(
          {finding.fix_id, std::string(finding.rule.text()), finding.file, finding.line, finding.impact_fraction});
    }
  }
  return fixes;
}

// Fields of advise's JSON that may be null (a finding without a location or an impact).
std::string textOr(const nlohmann::json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

double numberOr(const nlohmann::json& object, const char* key, double fallback) {
  const auto found = object.find(key);
  return found != object.end() && found->is_number() ? found->get<double>() : fallback;
}

std::vector<FindingFix> fixesFromAdvise(const FixOptions& options, const std::string& store_path) {
  std::vector<FindingFix> fixes;
  std::error_code error;
  if (options.torchscope_executable.empty() || !std::filesystem::exists(options.torchscope_executable, error)) return fixes;
  // The advice goes to a temporary file: nothing is written beside the user's store.
  const auto output =
      (std::filesystem::temp_directory_path() / ("torchscope-advice-" + std::to_string(::getpid()) + ".json")).string();
  ProcessSpec spec;
  spec.argv = {options.torchscope_executable, "advise", store_path, "--format", "json"};
  spec.stdout_path = output;
  auto process = runProcess(spec);
  const auto advice = nlohmann::json::parse(readTextFile(output), nullptr, false);
  std::filesystem::remove(output, error);
  if (!process) return fixes;  // any exit code: a gate may exit non-zero while printing its findings
  if (!advice.is_object() || !advice.contains("findings") || !advice["findings"].is_array()) return fixes;
  for (const auto& finding : advice["findings"]) {
    if (!finding.is_object() || !finding.contains("fix") || !finding["fix"].is_object()) continue;
    FindingFix fix;
    fix.fix_id = textOr(finding["fix"], "id");
    if (fix.fix_id.empty()) continue;
    fix.rule = textOr(finding, "rule");
    if (const auto location = finding.find("location"); location != finding.end() && location->is_object()) {
      fix.file = textOr(*location, "file");
      fix.line = static_cast<std::int64_t>(numberOr(*location, "line", -1));
    }
    if (const auto impact = finding.find("impact"); impact != finding.end() && impact->is_object()) {
      fix.impact_fraction = numberOr(*impact, "fraction", -1);
    }
    fixes.push_back(std::move(fix));
  }
  return fixes;
}

std::vector<FindingFix> fixesFromProfile(const RunMeasurement& profile) {
  std::vector<std::string> ids;
  if (profile.compiles == 0) {
    ids.emplace_back("torch-compile");
  }
  if (profile.recompiles > 0) {
    ids.emplace_back("dynamic-shapes");
    ids.emplace_back("tensor-lr");
  }
  if (profile.graph_breaks > 0) ids.emplace_back("capture-scalar-outputs");
  for (const char* source : {"item-accumulate-tensor", "tuple-keys-to-str", "print-out-of-compiled"}) {
    ids.emplace_back(source);
  }
  std::vector<FindingFix> fixes;
  for (auto& id : ids) fixes.push_back({std::move(id), "", "", -1, -1});
  return fixes;
}

// Source fixes that rewrite the lines their findings name ("FILE:LINE;FILE:LINE"), and the fix ids of the findings
// whose lines they take: `.item()` breaks propose capture-scalar-outputs, which item-kept-as-tensor also answers.
bool takesLinesOf(std::string_view fix_id, std::string_view finding_fix) {
  if (fix_id == "remove-data-dependent-branch" || fix_id == "print-out-of-compiled" || fix_id == "sdpa") {
    return finding_fix == fix_id;
  }
  if (fix_id == "item-kept-as-tensor") return finding_fix == fix_id || finding_fix == "capture-scalar-outputs";
  return false;
}

// The source form beside a runtime fix of the same findings, tried before it.
constexpr std::string_view kItemRuntimeFix = "capture-scalar-outputs";
constexpr std::string_view kItemSourceFix = "item-kept-as-tensor";

void addLocation(FixRequest& request, const FindingFix& finding) {
  if (finding.file.empty() || finding.line <= 0) return;
  const std::string location = fmt::format("{}:{}", finding.file, finding.line);
  if ((";" + request.arg + ";").find(";" + location + ";") != std::string::npos) return;
  request.arg += (request.arg.empty() ? "" : ";") + location;
}

std::vector<FindingFix> findingsOf(const FixOptions& options, const std::string& findings_store) {
  if (findings_store.empty()) return {};
  auto findings = fixesFromStore(findings_store);
  return findings.empty() ? fixesFromAdvise(options, findings_store) : findings;
}

std::string describe(const FindingFix& finding) {
  if (finding.rule.empty()) return "";
  if (finding.file.empty()) return finding.rule;
  return fmt::format("{} at {}:{}", finding.rule, finding.file, finding.line);
}

}  // namespace

Result<std::vector<Candidate>> chooseCandidates(const FixOptions& options, const std::string& findings_store,
                                                const RunMeasurement& profile, std::vector<std::string>& notes) {
  if (!options.fixes.empty()) {
    auto requests = parseFixList(options.fixes, options.allow_test_fixes);
    if (!requests) return requests.error();
    std::vector<Candidate> explicit_fixes;
    for (auto& request : *requests) {
      // Named without its lines, a located fix takes them from the findings.
      if (request.arg.empty() && takesLinesOf(request.id, request.id)) {
        for (const FindingFix& finding : findingsOf(options, findings_store)) {
          if (takesLinesOf(request.id, finding.fix_id)) addLocation(request, finding);
        }
      }
      explicit_fixes.push_back({std::move(request), -1, ""});
    }
    return explicit_fixes;
  }
  std::vector<FindingFix> findings = findingsOf(options, findings_store);
  if (findings.empty()) {
    notes.push_back("no findings with fixes: trying the fixes the profile run suggests and every source fix");
    findings = fixesFromProfile(profile);
  }
  // The source form goes first: where it applies the break is gone with no setting changed; where it does not it is
  // "not applicable", which takes no place under --max-fixes, and the runtime fix is tried (`.tolist()` of floats
  // keeps its break under capture-scalar-outputs).
  std::vector<FindingFix> with_source_forms;
  for (FindingFix& finding : findings) {
    if (finding.fix_id == kItemRuntimeFix && finding.line > 0) {
      FindingFix source = finding;
      source.fix_id = kItemSourceFix;
      with_source_forms.push_back(std::move(source));
    }
    with_source_forms.push_back(std::move(finding));
  }
  findings = std::move(with_source_forms);
  // One candidate per fix id: its findings' impacts add up (each is time the fix may remove).
  std::vector<Candidate> candidates;
  for (const FindingFix& finding : findings) {
    if (!findFix(finding.fix_id)) {
      notes.push_back("fix '" + finding.fix_id + "' from the findings is not in the catalogue; skipped");
      continue;
    }
    if (finding.fix_id == "repeat-interleave-output-size") {
      notes.push_back("repeat-interleave-output-size needs the size expression: --fixes repeat-interleave-output-size:EXPR");
      continue;
    }
    auto known = std::find_if(candidates.begin(), candidates.end(),
                              [&](const Candidate& candidate) { return candidate.request.id == finding.fix_id; });
    if (known == candidates.end()) {
      auto request = parseFixList(finding.fix_id);
      if (!request) return request.error();
      if (takesLinesOf(finding.fix_id, finding.fix_id)) addLocation(request->front(), finding);
      candidates.push_back({request->front(), finding.impact_fraction, describe(finding)});
      continue;
    }
    if (takesLinesOf(finding.fix_id, finding.fix_id)) addLocation(known->request, finding);
    if (finding.impact_fraction > 0) {
      known->impact_fraction = std::max(known->impact_fraction, 0.0) + finding.impact_fraction;
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.impact_fraction > b.impact_fraction; });
  return candidates;
}

}  // namespace torchscope::compiler
