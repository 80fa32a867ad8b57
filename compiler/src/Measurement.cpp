#include "torchscope/compiler/Measurement.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

#include "torchscope/store/Reader.h"

namespace torchscope::compiler {

std::vector<double> steadyStateStepTimes(const RunMeasurement& run, int warmup_steps) {
  std::vector<double> all;
  std::vector<double> steady;
  for (std::size_t i = static_cast<std::size_t>(std::max(warmup_steps, 0)); i < run.steps.size(); ++i) {
    const StepSample& step = run.steps[i];
    const double duration = step.end_s - step.start_s;
    all.push_back(duration);
    if (!step.overlaps_compile) steady.push_back(duration);
  }
  return steady.empty() ? all : steady;
}

Result<void> readLauncherReport(const std::string& path, RunMeasurement& run) {
  std::ifstream input(path);
  if (!input) return makeError(ErrorCode::kNotFound, "no launcher report at " + path);
  const nlohmann::json report = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (!report.is_object()) return makeError(ErrorCode::kCorrupt, "unreadable launcher report " + path);
  run.steps.clear();
  for (const auto& step : report.value("steps", nlohmann::json::array())) {
    if (step.is_array() && step.size() >= 3 && step[0].is_number() && step[1].is_number()) {
      run.steps.push_back({step[0].get<double>(), step[1].get<double>(), step[2].is_number() && step[2].get<int>() != 0});
    }
  }
  run.steps_source = "launcher";
  run.compile_time_s = report.value("compile_time_s", 0.0);
  run.compiles = static_cast<std::int64_t>(report.value("compiles", nlohmann::json::array()).size());
  run.recompiles = report.value("recompiles", std::int64_t{0});
  run.graph_breaks = report.value("graph_breaks", std::int64_t{0});
  return {};
}

Result<void> readStore(const std::string& path, RunMeasurement& run) {
  auto reader = store::Reader::open(path);
  if (!reader) return reader.error();
  auto steps = (*reader)->load<store::Step>();
  auto compiles = (*reader)->load<store::Compile>();
  auto recompiles = (*reader)->load<store::Recompile>();
  auto breaks = (*reader)->load<store::GraphBreak>();
  auto syncs = (*reader)->load<store::Sync>();
  auto info = (*reader)->run();
  if (!steps || !compiles || !recompiles || !breaks || !syncs || !info) {
    return makeError(ErrorCode::kCorrupt, "cannot read the run's tables from " + path);
  }
  constexpr double kSecond = 1e9;
  const store::Nanos origin = info->start_ns;
  if (!steps->empty()) {
    run.steps.clear();
    for (const auto& step : *steps) {
      const bool compiled = std::any_of(compiles->begin(), compiles->end(), [&](const store::Compile& c) {
        return c.start_ns < step.end_ns && c.end_ns > step.start_ns;
      });
      run.steps.push_back({static_cast<double>(step.start_ns - origin) / kSecond,
                           static_cast<double>(step.end_ns - origin) / kSecond, compiled});
    }
    run.steps_source = "store";
  }
  if (!compiles->empty()) {
    run.compiles = static_cast<std::int64_t>(compiles->size());
    run.compile_time_s = 0;
    for (const auto& c : *compiles) run.compile_time_s += static_cast<double>(c.end_ns - c.start_ns) / kSecond;
    run.recompiles = static_cast<std::int64_t>(recompiles->size());
    run.graph_breaks = static_cast<std::int64_t>(breaks->size());
  }
  run.syncs = static_cast<std::int64_t>(syncs->size());
  // Summed over the devices: what the job needs on its GPUs.
  auto done = (*reader)->query(
      "SELECT series, sum(peak) FROM (SELECT series, device, max(value) AS peak FROM memory_samples "
      "WHERE series IN ('cuda.peak_allocated', 'cuda.peak_reserved') GROUP BY series, device) GROUP BY series",
      [&](const store::Row& row) {
        (row.text(0) == "cuda.peak_allocated" ? run.gpu_peak_allocated_bytes : run.gpu_peak_reserved_bytes) =
            row.integer(1);
      });
  if (!done) return done.error();
  return {};
}

}  // namespace torchscope::compiler
