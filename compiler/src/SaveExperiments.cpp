#include <nlohmann/json.hpp>

#include "torchscope/compiler/Experiment.h"
#include "torchscope/store/Writer.h"

namespace torchscope::compiler {
namespace {

store::FixExperiment toRecord(const FixOutcome& fix, const FixReport& report) {
  store::FixExperiment row;
  row.fix_id = fix.id;
  row.kind = fix.kind;
  row.accepted = fix.accepted;
  row.reason = fix.reason;
  row.repetitions = fix.measured ? report.repetitions : 0;
  row.baseline_step_median_s = report.baseline.step_time_median_s;
  row.candidate_step_median_s = fix.stats.step_time_median_s;
  row.speedup_median = fix.speedup.median;
  row.speedup_ci_low = fix.speedup.ci_low;
  row.speedup_ci_high = fix.speedup.ci_high;
  row.total_speedup = fix.total_speedup;
  row.compile_time_delta_s = fix.compile_time_delta_s;
  row.recompiles_after = fix.measured ? fix.stats.recompiles : -1;
  row.graph_breaks_after = fix.measured ? fix.stats.graph_breaks : -1;
  row.syncs_after = fix.measured ? fix.stats.syncs : -1;
  row.parity_ok = fix.parity.ok;
  row.max_rel_diff = fix.parity.max_rel_diff;
  row.diff = fix.diff;
  row.details = nlohmann::json{{"command", report.command},
                               {"members", fix.members},
                               {"parity_checked", fix.parity.checked},
                               {"baseline_total_time_s", report.baseline.total_time_s},
                               {"candidate_total_time_s", fix.stats.total_time_s},
                               {"wall_s", fix.stats.wall_s},
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
