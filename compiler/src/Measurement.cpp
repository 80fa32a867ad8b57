#include "torchscope/compiler/Measurement.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

#include "torchscope/base/Saturating.h"
#include "torchscope/base/SteadyState.h"
#include "torchscope/compiler/Statistics.h"
#include "torchscope/store/Reader.h"

namespace torchscope::compiler {
namespace {

// Steady-state steps of `steps` (see steadyStateStepTimes), each as `duration(step)`.
template <typename Duration>
std::vector<double> steadySteps(const std::vector<StepSample>& steps, int warmup_steps, Duration duration) {
  std::vector<bool> compiling;
  for (const auto& step : steps) compiling.push_back(step.overlaps_compile);
  const base::SteadyStateRule rule{.warmup_steps = static_cast<std::size_t>(std::max(warmup_steps, 0)),
                                   .min_steps_for_warmup = 0,
                                   .all_compiling_fallback = true};
  std::vector<double> steady;
  for (const std::size_t position : base::steadyStepPositions(compiling, rule)) {
    steady.push_back(duration(steps[position]));
  }
  return steady;
}

double orUnknown(double value) { return value >= 0 ? value : -1; }

double medianOrUnknown(const std::vector<double>& values) { return values.empty() ? -1 : median(values); }

void fillFromLauncher(const nlohmann::json& report, RunMeasurement& run) {
  run.launcher_steps.clear();
  for (const auto& step : report.value("steps", nlohmann::json::array())) {
    if (step.is_array() && step.size() >= 3 && step[0].is_number() && step[1].is_number()) {
      const double cpu = step.size() >= 4 && step[3].is_number() ? step[3].get<double>() : -1;
      run.launcher_steps.push_back(
          {step[0].get<double>(), step[1].get<double>(), step[2].is_number() && step[2].get<int>() != 0, cpu});
    }
  }
  run.steps = run.launcher_steps;
  run.steps_source = "launcher";
  run.compile_time_s = report.value("compile_time_s", 0.0);
  run.compile_cpu_s = report.value("compile_cpu_s", -1.0);
  if (const auto first = report.find("first_step"); first != report.end() && first->is_object()) {
    run.first_step_wall_s = first->value("wall_s", -1.0);
    run.first_step_cpu_s = first->value("cpu_s", -1.0);
  }
  run.compiles = static_cast<std::int64_t>(report.value("compiles", nlohmann::json::array()).size());
  run.recompiles = report.value("recompiles", std::int64_t{0});
  run.graph_breaks = report.value("graph_breaks", std::int64_t{0});
  run.cuda_used = report.value("cuda_used", false);
  const auto stopped = report.find("stopped_after_steps");
  run.stopped_after_steps = stopped != report.end() && stopped->is_number_integer() ? stopped->get<int>() : 0;
  if (const auto files = report.find("executed_files"); files != report.end() && files->is_array()) {
    run.executed_files_known = true;
    run.executed_files.clear();
    for (const auto& file : *files) {
      if (file.is_string()) run.executed_files.push_back(file.get<std::string>());
    }
  }
}

}  // namespace

std::vector<double> steadyStateStepTimes(const RunMeasurement& run, int warmup_steps) {
  return steadySteps(run.steps, warmup_steps, [](const StepSample& step) { return step.end_s - step.start_s; });
}

std::vector<double> steadyStateStepCpu(const RunMeasurement& run, int warmup_steps) {
  std::vector<double> cpu = steadySteps(run.launcher_steps, warmup_steps, [](const StepSample& step) { return step.cpu_s; });
  if (std::any_of(cpu.begin(), cpu.end(), [](double value) { return value < 0; })) return {};
  return cpu;
}

std::string Metric::name() const {
  static constexpr const char* kMeasures[] = {"end_to_end", "first_step", "compile", "steady_step"};
  return std::string(kMeasures[static_cast<int>(measure)]) + (clock == Clock::kWall ? "_wall" : "_cpu");
}

std::string Metric::title() const {
  static constexpr const char* kMeasures[] = {"end-to-end", "first-step", "compile", "steady-state step"};
  return std::string(kMeasures[static_cast<int>(measure)]) + (clock == Clock::kWall ? " wall time" : " CPU time");
}

const std::vector<Metric>& allMetrics() {
  static const std::vector<Metric> metrics = [] {
    std::vector<Metric> all;
    for (const Measure measure : {Measure::kEndToEnd, Measure::kFirstStep, Measure::kCompile, Measure::kSteadyStep}) {
      for (const Clock clock : {Clock::kWall, Clock::kCpu}) all.push_back({measure, clock});
    }
    return all;
  }();
  return metrics;
}

Result<Metric> parseMetric(std::string_view name) {
  for (const Metric& metric : allMetrics()) {
    if (metric.name() == name) return metric;
  }
  return makeError(ErrorCode::kInvalidArgument, "unknown measure '" + std::string(name) + "'");
}

double metricValue(const RunMeasurement& run, const Metric& metric, int warmup_steps) {
  const bool wall = metric.clock == Clock::kWall;
  switch (metric.measure) {
    case Measure::kEndToEnd: return wall ? run.wall_s : orUnknown(run.cpu_s);
    case Measure::kFirstStep: return orUnknown(wall ? run.first_step_wall_s : run.first_step_cpu_s);
    case Measure::kCompile: return wall ? run.compile_time_s : orUnknown(run.compile_cpu_s);
    case Measure::kSteadyStep:
      return medianOrUnknown(wall ? steadyStateStepTimes(run, warmup_steps) : steadyStateStepCpu(run, warmup_steps));
  }
  return -1;
}

std::int64_t recompilesOf(const RunMeasurement& run, const std::string& cause) {
  if (run.recompiles_by_cause.empty()) return run.recompiles;
  const auto found = run.recompiles_by_cause.find(cause);
  return found == run.recompiles_by_cause.end() ? 0 : found->second;
}

Result<void> readLauncherReport(const std::string& path, RunMeasurement& run) {
  std::ifstream input(path);
  if (!input) return makeError(ErrorCode::kNotFound, "no launcher report at " + path);
  const nlohmann::json report = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (!report.is_object()) return makeError(ErrorCode::kCorrupt, "unreadable launcher report " + path);
  try {
    fillFromLauncher(report, run);
  } catch (const nlohmann::json::exception& error) {  // a field of the wrong type
    return makeError(ErrorCode::kCorrupt, "unreadable launcher report " + path + ": " + error.what());
  }
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
  const base::Nanos origin = info->start_ns;
  if (!steps->empty()) {
    run.steps.clear();
    const std::vector<bool> compiling = base::compilingSteps(*steps, *compiles);
    for (std::size_t i = 0; i < steps->size(); ++i) {
      const auto& step = (*steps)[i];
      run.steps.push_back({static_cast<double>(base::saturatingSub(step.start_ns, origin)) / kSecond,
                           static_cast<double>(base::saturatingSub(step.end_ns, origin)) / kSecond, compiling[i]});
    }
    run.steps_source = "store";
  }
  if (!compiles->empty()) {
    run.compiles = static_cast<std::int64_t>(compiles->size());
    run.compile_time_s = 0;
    for (const auto& c : *compiles)
      run.compile_time_s += static_cast<double>(base::spanNanos(c.start_ns, c.end_ns)) / kSecond;
    run.recompiles = static_cast<std::int64_t>(recompiles->size());
    run.recompiles_by_cause.clear();
    for (const auto& recompile : *recompiles) ++run.recompiles_by_cause[recompile.cause];
    run.graph_breaks = static_cast<std::int64_t>(breaks->size());
  }
  run.syncs = static_cast<std::int64_t>(syncs->size());
  // Summed over the devices: what the job needs on its GPUs (total(): sum() fails on an integer overflow).
  auto done = (*reader)->query(
      "SELECT series, total(peak) FROM (SELECT series, device, max(value) AS peak FROM memory_samples "
      "WHERE series IN ('cuda.peak_allocated', 'cuda.peak_reserved') GROUP BY series, device) GROUP BY series",
      [&](const store::Row& row) {
        (row.text(0) == "cuda.peak_allocated" ? run.gpu_peak_allocated_bytes : run.gpu_peak_reserved_bytes) =
            base::saturatingCast(row.real(1));
      });
  if (!done) return done.error();
  return {};
}

}  // namespace torchscope::compiler
