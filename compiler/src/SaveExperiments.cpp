#include <nlohmann/json.hpp>

#include <cmath>

#include "torchscope/compiler/Experiment.h"
#include "torchscope/compiler/Report.h"
#include "torchscope/store/Writer.h"

namespace torchscope::compiler {
namespace {

// The table's REAL columns are NOT NULL: an unknown number (not measured) is stored as 0.
double orZero(double value) { return std::isfinite(value) ? value : 0.0; }

store::FixExperiment toRecord(const FixOutcome& fix, const FixReport& report) {
  store::FixExperiment row;
  row.fix_id = fix.id;
  row.kind = fix.kind;
  row.accepted = fix.accepted;
  row.reason = fix.reason;
  row.repetitions = fix.measured ? fix.stats.runs : 0;
  row.baseline_step_median_s = orZero(report.baseline.step_time_median_s);
  row.candidate_step_median_s = orZero(fix.stats.step_time_median_s);
  row.speedup_median = orZero(fix.speedup.estimate);
  row.speedup_ci_low = orZero(fix.speedup.ci_low);
  row.speedup_ci_high = orZero(fix.speedup.ci_high);
  row.total_speedup = orZero(fix.total_speedup);
  row.compile_time_delta_s = orZero(fix.compile_time_delta_s);
  row.recompiles_after = fix.measured ? fix.stats.recompiles : -1;
  row.graph_breaks_after = fix.measured ? fix.stats.graph_breaks : -1;
  row.syncs_after = fix.measured ? fix.stats.syncs : -1;
  row.parity_ok = fix.parity.ok;
  row.max_rel_diff = orZero(fix.parity.max_rel_diff);
  row.diff = fix.diff;
  row.details = nlohmann::json{{"command", report.command},
                               {"status", fix.status},
                               {"members", fix.members},
                               {"parity_checked", fix.parity.checked},
                               {"baseline_total_time_s", report.baseline.total_time_s},
                               {"candidate_total_time_s", fix.stats.total_time_s},
                               {"wall_s", fix.stats.wall_s},
                               {"verdict_metric", report.verdict_metric},
                               {"metrics", metricsJson(fix.stats)},
                               {"baseline_peak_rss_bytes", report.baseline.peak_rss_bytes},
                               {"candidate_peak_rss_bytes", fix.stats.peak_rss_bytes},
                               {"baseline_gpu_peak_reserved_bytes", report.baseline.gpu_peak_reserved_bytes},
                               {"candidate_gpu_peak_reserved_bytes", fix.stats.gpu_peak_reserved_bytes},
                               {"memory_increase", fix.memory.known() ? nlohmann::json(fix.memory.increase)
                                                                      : nlohmann::json(nullptr)}}
                    .dump();
  return row;
}

}  // namespace

Result<void> saveFixExperiments(const FixReport& report, const std::string& store_path) {
  store::WriterOptions options;
  options.mode = store::OpenMode::kAppend;
  auto writer = store::Writer::open(store_path, options);
  if (!writer) return writer.error();
  for (const auto& fix : report.fixes) (*writer)->add(toRecord(fix, report));
  if (report.combined) (*writer)->add(toRecord(*report.combined, report));
  return (*writer)->close();
}

}  // namespace torchscope::compiler
