// A distributed run read back from its ranks (Runner.h: readRanks).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "Runner.h"
#include "torchscope/compiler/Parity.h"
#include "torchscope/compiler/Process.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::compiler {
namespace fs = std::filesystem;

namespace {

struct RankRun {
  RunMeasurement measurement;
  bool reported = false;  // its launcher wrote a report (it did not die hard)
};

// launch.rank<r>.json -> r; -1 for another name.
long long reportRank(const std::string& name) {
  constexpr std::string_view kPrefix = "launch.rank";
  if (name.rfind(kPrefix, 0) != 0 || name.size() < kPrefix.size() + 6) return -1;
  const std::string digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - 5);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoll(digits);
}

// A rank's median steady-state step, measured as the comparison measures it (-1 when it stored no steady step).
double steadyMedian(const RunMeasurement& run) {
  return metricValue(run, Metric{Measure::kSteadyStep, Clock::kWall}, 1);
}

}  // namespace

void readRanks(const fs::path& folder, const std::string& parity_pattern, RunMeasurement& run) {
  std::map<long long, RankRun> ranks;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const long long rank = reportRank(entry.path().filename().string());
    if (rank < 0) continue;
    RankRun& rank_run = ranks[rank];
    rank_run.reported = readLauncherReport(entry.path().string(), rank_run.measurement).ok();
    // The rank's own exit status, which the launcher reports (the harness sees torchrun's).
    const auto report = nlohmann::json::parse(readTextFile(entry.path().string()), nullptr, false);
    if (report.is_object() && report.value("exit_code", nlohmann::json()).is_number_integer()) {
      rank_run.measurement.exit_code = report["exit_code"].get<int>();
    }
  }
  // A rank that left output but no report died before its launcher could write one.
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("stderr.rank", 0) == 0 && name.size() > 11 && name[11] >= '0' && name[11] <= '9') {
      ranks.try_emplace(std::stoll(name.substr(11)));
    }
  }
  std::vector<double> parity;
  const RankRun* slowest = nullptr;
  long long slowest_rank = -1;
  std::string failures;
  for (auto& [rank, rank_run] : ranks) {
    const std::string suffix = fmt::format(".rank{}.txt", rank);
    if (auto values = extractParityValues(readTextFile((folder / ("stdout" + suffix)).string()), parity_pattern)) {
      parity.insert(parity.end(), values->begin(), values->end());
    }
    RunMeasurement& rank_measurement = rank_run.measurement;
    const int exit_code = rank_run.reported ? rank_measurement.exit_code : 1;
    if (exit_code != 0) {
      const std::string tail = lastLines(readTextFile((folder / ("stderr" + suffix)).string()), 3);
      failures += fmt::format("{}rank {} (exit {}): {}", failures.empty() ? "" : "; ", rank, exit_code,
                              tail.empty() ? "no output on stderr" : tail);
      continue;
    }
    run.compiles = std::max(run.compiles, rank_measurement.compiles);
    run.recompiles = std::max(run.recompiles, rank_measurement.recompiles);
    run.graph_breaks = std::max(run.graph_breaks, rank_measurement.graph_breaks);
    run.cuda_used = run.cuda_used || rank_measurement.cuda_used;
    run.stopped_after_steps = std::max(run.stopped_after_steps, rank_measurement.stopped_after_steps);
    if (slowest == nullptr || steadyMedian(rank_measurement) > steadyMedian(slowest->measurement)) {
      slowest = &rank_run;
      slowest_rank = rank;
    }
  }
  run.ranks = static_cast<int>(ranks.size());
  run.parity_values = std::move(parity);
  if (!failures.empty()) {
    run.error_tail = failures;
    if (run.exit_code == 0) run.exit_code = 1;
  }
  if (slowest == nullptr) return;
  const RunMeasurement& from = slowest->measurement;
  run.slowest_rank = static_cast<int>(slowest_rank);
  run.steps = from.steps;
  run.launcher_steps = from.launcher_steps;
  run.steps_source = from.steps_source;
  run.compile_time_s = from.compile_time_s;
  run.compile_cpu_s = from.compile_cpu_s;
  run.first_step_wall_s = from.first_step_wall_s;
  run.first_step_cpu_s = from.first_step_cpu_s;
  run.executed_files_known = from.executed_files_known;
  run.executed_files = from.executed_files;
  if (run.store_path.empty()) return;
  // The collector's store of the slowest rank knows the causes of its recompiles.
  for (const std::string& store : store::companionStores(run.store_path)) {
    if (store::rankInStoreName(fs::path(store).filename().string()) != slowest_rank) continue;
    RunMeasurement from_store = run;
    if (readStore(store, from_store).ok()) {
      run.recompiles_by_cause = from_store.recompiles_by_cause;
      run.syncs = from_store.syncs;
    }
  }
}

}  // namespace torchscope::compiler
