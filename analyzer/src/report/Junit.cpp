// JUnit XML as CI servers parse it (testsuites > testsuite > testcase with failure or system-out).
#include <fmt/format.h>

#include <map>

#include "Reports.h"
#include "torchscope/base/JsonText.h"

namespace torchscope::analyzer::report {

std::string junit(const Analysis& analysis) {
  // One test case per finding (failing unless it is only "info"), and a passing one per rule that found nothing,
  // so that CI servers show which checks ran.
  std::map<std::string_view, int> found;
  for (const auto& finding : analysis.findings) ++found[finding.rule.text()];
  std::string cases;
  int tests = 0;
  int failures = 0;
  for (const auto& finding : analysis.findings) {
    ++tests;
    const std::string rule(finding.rule.text());
    const std::string name = location(finding).empty() ? rule : rule + " at " + location(finding);
    const std::string_view family = finding.rule.family();
    cases += fmt::format("    <testcase classname=\"torchscope.{}\" name=\"{}\" time=\"0\">\n", escapeXml(family),
                         escapeXml(name));
    const std::string body = escapeXml(fmt::format(
        "{}\nImpact: {:.3f} s ({:.1f} % of the run)\nFix: {}\nEvidence: {}", finding.message, finding.impact_seconds,
        finding.impact_fraction * 100, finding.fix_summary, base::dumpJson(finding.evidence)));
    if (finding.severity == Severity::kInfo) {
      cases += fmt::format("      <system-out>{}</system-out>\n", body);
    } else {
      ++failures;
      cases += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", escapeXml(finding.title),
                           severityName(finding.severity), body);
    }
    cases += "    </testcase>\n";
  }
  for (const auto& id : ruleIds()) {
    if (found.count(id)) continue;
    ++tests;
    const std::string family = id.substr(0, id.find('/'));
    cases += fmt::format("    <testcase classname=\"torchscope.{}\" name=\"{}\" time=\"0\"/>\n", escapeXml(family),
                         escapeXml(id));
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"torchscope advise\" tests=\"{0}\" failures=\"{1}\" errors=\"0\">\n", tests,
                     failures);
  out += fmt::format("  <testsuite name=\"torchscope.advise\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n",
                     tests, failures);
  out += cases;
  if (!analysis.notes.empty()) {
    std::string notes;
    for (const auto& note : analysis.notes) notes += note + "\n";
    out += "    <system-out>" + escapeXml(notes) + "</system-out>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace torchscope::analyzer::report
