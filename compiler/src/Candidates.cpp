#include "Candidates.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>

#include "torchscope/compiler/Process.h"
#include "torchscope/store/Reader.h"

namespace torchscope::compiler {
namespace {

std::vector<std::string> fixIdsFromStore(const std::string& path) {
  std::vector<std::string> ids;
  auto reader = store::Reader::open(path);
  if (!reader) return ids;
  auto findings = (*reader)->load<store::Finding>();
  if (!findings) return ids;
  for (const auto& finding : *findings) {
    if (!finding.fix_id.empty()) ids.push_back(finding.fix_id);
  }
  return ids;
}

std::vector<std::string> fixIdsFromAdvise(const FixOptions& options, const std::string& store_path) {
  std::vector<std::string> ids;
  std::error_code error;
  if (options.torchscope_executable.empty() || !std::filesystem::exists(options.torchscope_executable, error)) return ids;
  // The advice goes to a temporary file: nothing is written beside the user's store.
  const auto output =
      (std::filesystem::temp_directory_path() / ("torchscope-advice-" + std::to_string(::getpid()) + ".json")).string();
  ProcessSpec spec;
  spec.argv = {options.torchscope_executable, "advise", store_path, "--format", "json"};
  spec.stdout_path = output;
  auto process = runProcess(spec);
  const auto advice = nlohmann::json::parse(readTextFile(output), nullptr, false);
  std::filesystem::remove(output, error);
  if (!process) return ids;  // any exit code: a gate may exit non-zero while printing its findings
  if (!advice.is_object() || !advice.contains("findings") || !advice["findings"].is_array()) return ids;
  for (const auto& finding : advice["findings"]) {
    if (finding.is_object() && finding.contains("fix") && finding["fix"].is_object()) {
      const auto id = finding["fix"].value("id", std::string());
      if (!id.empty()) ids.push_back(id);
    }
  }
  return ids;
}

std::vector<std::string> fixIdsFromProfile(const RunMeasurement& profile) {
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
  return ids;
}

}  // namespace

Result<std::vector<FixRequest>> chooseCandidates(const FixOptions& options, const std::string& findings_store,
                                                 const RunMeasurement& profile, std::vector<std::string>& notes) {
  if (!options.fixes.empty()) return parseFixList(options.fixes, options.allow_test_fixes);
  std::vector<std::string> ids;
  if (!findings_store.empty()) {
    ids = fixIdsFromStore(findings_store);
    if (ids.empty()) ids = fixIdsFromAdvise(options, findings_store);
  }
  if (ids.empty()) {
    notes.push_back("no findings with fixes: trying the fixes the profile run suggests and every source fix");
    ids = fixIdsFromProfile(profile);
  }
  std::string list;
  for (const auto& id : ids) {
    if (!findFix(id)) {
      notes.push_back("fix '" + id + "' from the findings is not in the catalogue; skipped");
      continue;
    }
    if (id == "repeat-interleave-output-size") {
      notes.push_back("repeat-interleave-output-size needs the size expression: --fixes repeat-interleave-output-size:EXPR");
      continue;
    }
    list += (list.empty() ? "" : ",") + id;
  }
  return parseFixList(list);
}

}  // namespace torchscope::compiler
