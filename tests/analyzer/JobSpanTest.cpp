// A job of several processes (a DataLoader's workers, ranks): its span is the union of its runs' intervals, not
// their durations added up, and the text report's first sentence names its processes and takes its fractions of
// that span.
#include <string>
#include <vector>

#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Report.h"

namespace torchscope::analyzer::testing {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

RunSummary runOf(const std::string& host, std::int64_t begin_s, std::int64_t end_s, const std::string& process) {
  RunSummary run;
  run.run.host = host;
  run.run.start_ns = begin_s * kSecond;
  run.run.start_wall_ns = 1'700'000'000 * kSecond + begin_s * kSecond;
  run.run.end_ns = end_s * kSecond;
  run.begin_ns = run.run.start_ns;
  run.end_ns = run.run.end_ns;
  run.duration_s = static_cast<double>(end_s - begin_s);
  run.process_name = process;
  return run;
}

TEST(JobSpan, ProcessesSideBySideCountOnce) {
  const std::vector<RunSummary> runs = {runOf("h", 100, 114, "python"), runOf("h", 101, 112, "pt_data_worker"),
                                        runOf("h", 102, 113, "pt_data_worker")};
  EXPECT_DOUBLE_EQ(jobSpanSeconds(runs), 14.0);
  // One after the other, with a gap: both intervals, not the gap.
  EXPECT_DOUBLE_EQ(jobSpanSeconds({runOf("h", 100, 104, "python"), runOf("h", 110, 113, "python")}), 7.0);
  EXPECT_DOUBLE_EQ(jobSpanSeconds({runOf("h", 100, 104, "python")}), 4.0);
}

TEST(JobSpan, HostsAreAlignedByTheirWallClockAnchors) {
  // Another host's monotonic clock started elsewhere: its anchor puts its run at the same dates.
  RunSummary other = runOf("b", 102, 110, "python");
  other.run.start_ns = other.begin_ns = 5 * kSecond;
  other.end_ns = other.run.end_ns = 13 * kSecond;
  EXPECT_DOUBLE_EQ(jobSpanSeconds({runOf("a", 100, 108, "python"), other}), 10.0);
  // Without anchors nothing aligns them: the longest run is what is known.
  other.run.start_wall_ns = 0;
  EXPECT_DOUBLE_EQ(jobSpanSeconds({runOf("a", 100, 108, "python"), other}), 8.0);
}

Finding compileTime(double seconds, double fraction) {
  Finding finding;
  finding.rule = RuleId("compile/time");
  finding.title = "Compilation took a while";
  finding.impact_seconds = seconds;
  finding.impact_fraction = fraction;
  finding.evidence = nlohmann::json::object();
  return finding;
}

std::string firstLine(const Analysis& analysis) {
  const std::string text = render(analysis, Format::kText);
  return text.substr(0, text.find('\n'));
}

TEST(JobSpan, TheHeadlineNamesTheProcessesAndTheirSpan) {
  Analysis analysis;
  analysis.runs = {runOf("h", 100, 114, "python"), runOf("h", 101, 112, "pt_data_worker"),
                   runOf("h", 102, 113, "pt_data_worker")};
  analysis.findings = {compileTime(7.0, 0.5)};
  EXPECT_EQ(firstLine(analysis),
            "50.0 % of this 14.00 s job of 3 processes (the main one and 2 DataLoader workers) was torch.compile "
            "compiling (7.00 s).");
  // Found in several processes, the impacts add up: the fraction is of their times added up, and says so.
  analysis.findings.front().evidence["stores"] = 3;
  analysis.findings.front().impact_seconds = 21.0;
  analysis.findings.front().impact_fraction = 21.0 / 36.0;
  EXPECT_EQ(firstLine(analysis),
            "58.3 % of the 36.00 s of process time of this 14.00 s job of 3 processes (the main one and 2 DataLoader "
            "workers) was torch.compile compiling (21.00 s).");
  // Ranks, each with its workers; processes nothing tells apart are just counted.
  analysis.runs[0].rank = 0;
  analysis.runs.push_back(runOf("h", 100, 114, "python"));
  analysis.runs.back().rank = 1;
  analysis.findings.clear();
  EXPECT_EQ(firstLine(analysis),
            "Nothing in this 14.00 s job of 4 processes (2 ranks and 2 DataLoader workers) needs attention.");
  for (auto& run : analysis.runs) {
    run.process_name = "python";
    run.rank = -1;
  }
  EXPECT_EQ(firstLine(analysis), "Nothing in this 14.00 s job of 4 processes needs attention.");
  // Runs given together that never overlapped are not one job's processes: their durations add up.
  analysis.runs = {runOf("h", 100, 104, "python"), runOf("h", 110, 113, "python")};
  EXPECT_EQ(firstLine(analysis), "Nothing in these 2 runs (7.00 s in all) needs attention.");
}

}  // namespace
}  // namespace torchscope::analyzer::testing
