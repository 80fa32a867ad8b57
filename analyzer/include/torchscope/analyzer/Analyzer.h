// The rule engine: reads one or more stores and returns ranked findings, each with its evidence
// and the fix it proposes (docs/rules.md documents every rule, docs/FORMAT.md the store).
//
// Error contract: analyze() fails with the store's error (kNotFound, kNotTorchscope, kVersion,
// kCorrupt) for a file it cannot read, naming the file; it never throws. A store from a run that
// did not finish (run.end_ns == -1) is analysed and marked partial, with a note.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "torchscope/analyzer/CaptureWindow.h"
#include "torchscope/analyzer/Finding.h"
#include "torchscope/analyzer/FlameGraph.h"
#include "torchscope/analyzer/LineTable.h"
#include "torchscope/analyzer/Ranks.h"
#include "torchscope/analyzer/Requests.h"
#include "torchscope/base/Result.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/Records.h"

namespace torchscope::analyzer {

// GPU and CPU activity of one time bucket, for the timeline overview of the HTML report.
struct TimelineBucket {
  double start_s = 0;        // from the start of the run
  double gpu_busy_s = 0;     // kernel time that falls in the bucket (summed over devices)
  double cpu_op_s = 0;       // CPU op time that starts in the bucket
  double sync_s = 0;         // host time blocked in syncs that start in the bucket
};

// What the HTML report's timeline overview draws on one time axis (seconds from the start of the run).
struct OverviewSpan {
  double start_s = 0;
  double end_s = 0;
  std::string label;  // compilations: the compiled frame; steps: their index
};
struct OverviewMark {
  double at_s = 0;
  std::string label;  // graph breaks: the reason and the user's line; recompiles: the cause and the frame
};
// Where on the axis a finding's events happened: its rule's rows at its location (all of the rule's rows when
// none is at that location), else the run's steady state. Findings are matched by rule, file, line and function.
struct FindingPlace {
  RuleId rule;
  std::string file;
  std::int64_t line = -1;
  std::string function;
  double start_s = 0;
  double end_s = 0;
};
struct Overview {
  std::vector<OverviewSpan> steps;
  std::vector<OverviewSpan> compiles;
  std::vector<OverviewMark> graph_breaks;
  std::vector<OverviewMark> recompiles;
  std::vector<std::pair<double, double>> host_rss;  // (seconds, bytes), thinned to a few hundred points
  std::vector<FindingPlace> findings;
};

// Peak memory of one GPU's caching allocator.
struct DeviceMemorySummary {
  std::int64_t device = 0;
  std::int64_t peak_allocated_bytes = -1;
  std::int64_t peak_reserved_bytes = -1;
  std::int64_t last_step_allocated_bytes = -1;  // at the last step end, -1 unknown
  std::int64_t last_step_reserved_bytes = -1;
  double allocated_growth_bytes_per_step = 0;   // least-squares slope over the steady-state steps, 0 when not growing
};

// What the run held (memory_samples); `recorded` is false for a store without memory figures.
struct MemorySummary {
  bool recorded = false;
  std::int64_t peak_rss_bytes = -1;        // the process's peak RSS (host.hwm, else the highest sample)
  std::int64_t last_step_rss_bytes = -1;   // host RSS at the last step end
  double rss_growth_bytes_per_step = 0;    // least-squares slope over the steady-state steps, 0 when not growing
  std::int64_t peak_rss_step = -1;         // the step whose end (or in-step peak) held the highest RSS, -1 unknown
  std::vector<DeviceMemorySummary> devices;
};

// A problem the compare gate counts (Compare.h): graph breaks, recompiles and repeated syncs by kind, file, function
// and detail (the break type, the recompile cause, the sync's op), at the lowest line they were seen at.
struct ProblemCount {
  std::string kind;  // "graph-break" | "recompile" | "sync"
  std::string file;
  std::int64_t line = -1;
  std::string function;
  std::string detail;
  std::int64_t count = 0;
};

// What one store says about its run, besides the findings.
struct RunSummary {
  std::string path;
  store::RunInfo run;
  bool partial = false;             // the run did not finish (crash, kill)
  double duration_s = 0;            // wall span of the run
  std::int64_t begin_ns = 0;        // that span on its host's monotonic clock (the run's times, else its rows')
  std::int64_t end_ns = 0;
  std::string process_name;         // the store's process (`processes.name`), "" unknown
  std::int64_t rank = -1;           // its distributed rank, -1 none
  std::vector<double> step_seconds; // every step in order
  std::vector<double> steady_step_seconds;  // steps that do not overlap a compilation, first step dropped
  double steady_step_median_s = 0;
  double compile_seconds = 0;
  std::int64_t compiles = 0;
  std::int64_t graph_breaks = 0;
  std::int64_t recompiles = 0;
  std::int64_t syncs = 0;
  std::int64_t kernels = 0;
  std::string job_folder;           // the job's own folder (its first user-code root), "" unknown
  CaptureWindow window;             // the part of the run the store kept (whole() without a window)
  std::vector<TimelineBucket> timeline;  // filled when AnalyzeOptions::timeline_buckets > 0, with the overview
  Overview overview;
  MemorySummary memory;
  RequestSummary requests;  // an inference job's requests (recorded: its steps are requests)
  LineTable lines;          // host time by line of the user's code (recorded: the store has stack samples)
  FlameGraph flame;         // the same samples as a tree of stacks, pruned under kFlameMinShare (recorded: likewise)
  std::vector<ProblemCount> problems;  // what compare counts, read by the map step so that compare reads no store
};

struct Analysis {
  std::vector<RunSummary> runs;
  std::vector<Finding> findings;   // most impact first
  std::vector<std::string> notes;  // partial runs, missing data, rules that could not run
  RankAnalysis ranks;              // the ranks side by side when the stores hold two or more
};

struct AnalyzeOptions {
  int timeline_buckets = 0;  // 0: no timeline overview (it costs one more pass over the kernels and the events)
  // Directories whose files count as the user's code besides the ones the run recorded (the job's
  // folder, editable installs): findings then point into them (`advise --user-code`).
  std::vector<std::string> user_code;
  // A store of the same job run with compilation off (`advise --against`, `torchscope fix --fixes eager`): the
  // compiled regions are measured against it and compile/does-not-pay reported when they do not pay at this length.
  std::string against;
};

// Analyses every store; findings with the same rule and location across stores are merged.
[[nodiscard]] Result<Analysis> analyze(const std::vector<std::string>& paths, const AnalyzeOptions& options = {});
// Analyses one open store.
[[nodiscard]] Result<Analysis> analyzeStore(const store::Reader& reader, const AnalyzeOptions& options = {});

// How long a job of several processes lasted: the union of its runs' intervals, on their host's monotonic clock
// when they share one host, else through their wall-clock anchors; the longest run when they have no common clock.
// Processes that run side by side (DataLoader workers, ranks) are not added up.
[[nodiscard]] double jobSpanSeconds(const std::vector<RunSummary>& runs);

// Whether the run is a DataLoader worker (torch names its worker processes `pt_data_worker`).
[[nodiscard]] bool isDataLoaderWorker(const RunSummary& run);

// Replaces the findings saved in the store at `path` with `findings` (for the GUI).
[[nodiscard]] Result<void> saveFindings(const std::string& path, const std::vector<Finding>& findings);

// The most any one process spent compiling, each process's time the union of its compilations' intervals
// (overlapping records count once; ranks compile side by side): the run's compile time in reports and in the
// commands' live status line.
[[nodiscard]] double compileWallSeconds(const std::vector<store::Compile>& compiles);

// Every rule id the engine can report, "<family>/<cause>".
[[nodiscard]] const std::vector<std::string>& ruleIds();

}  // namespace torchscope::analyzer
