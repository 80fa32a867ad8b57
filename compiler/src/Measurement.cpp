#include "torchscope/compiler/Measurement.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
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

// The median steady-state step of a run; -1 (unknown) when it has none.
constexpr base::QuantileRule kNoStepsIsUnknown{.empty = -1, .interpolation = kQuantileRule.interpolation};

OutputLeaf leafOf(const nlohmann::json& in) {
  OutputLeaf leaf;
  leaf.path = in.value("path", "");
  for (const auto& size : in.value("shape", nlohmann::json::array())) {
    if (size.is_number_integer()) leaf.shape.push_back(size.get<std::int64_t>());
  }
  for (const auto& value : in.value("values", nlohmann::json::array())) {
    leaf.values.push_back(value.is_number() ? value.get<double>() : std::nan(""));  // null: not finite
  }
  const auto abs_max = in.find("abs_max");
  leaf.abs_max = abs_max != in.end() && abs_max->is_number() ? abs_max->get<double>() : 0;
  for (const auto& index : in.value("top1", nlohmann::json::array())) {
    if (index.is_number_integer()) leaf.top1.push_back(index.get<std::int64_t>());
  }
  return leaf;
}

// The launcher's requests and kept outputs (torchscope_compiler/requests.py).
void fillRequests(const nlohmann::json& report, RunMeasurement& run) {
  run.requests.clear();
  run.request_items.clear();
  run.outputs.clear();
  const std::vector<StepSample> compiles = [&] {
    std::vector<StepSample> spans;
    for (const auto& c : report.value("compiles", nlohmann::json::array())) {
      if (c.is_array() && c.size() >= 2 && c[0].is_number() && c[1].is_number()) {
        spans.push_back({c[0].get<double>(), c[1].get<double>()});
      }
    }
    return spans;
  }();
  for (const auto& request : report.value("requests", nlohmann::json::array())) {
    if (!request.is_array() || request.size() < 3 || !request[0].is_number() || !request[1].is_number()) continue;
    StepSample sample{request[0].get<double>(), request[1].get<double>()};
    sample.overlaps_compile = std::any_of(compiles.begin(), compiles.end(), [&](const StepSample& c) {
      return c.start_s < sample.end_s && c.end_s > sample.start_s;
    });
    run.requests.push_back(sample);
    run.request_items.push_back(request[2].is_number_integer() ? request[2].get<std::int64_t>() : -1);
  }
  for (const auto& output : report.value("outputs", nlohmann::json::array())) {
    if (!output.is_object()) continue;
    RequestOutput kept;
    kept.not_comparable = output.value("not_comparable", "");
    for (const auto& leaf : output.value("leaves", nlohmann::json::array())) {
      if (leaf.is_object()) kept.leaves.push_back(leafOf(leaf));
    }
    run.outputs.push_back(std::move(kept));
  }
}

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
  fillRequests(report, run);
  run.not_applicable.clear();
  // Held by name: items() of the temporary that value() returns would outlive it.
  const nlohmann::json not_applicable = report.value("not_applicable", nlohmann::json::object());
  for (const auto& [fix_id, reason] : not_applicable.items()) {
    if (reason.is_string()) run.not_applicable[fix_id] = reason.get<std::string>();
  }
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

bool isInference(const RunMeasurement& run) { return run.steps.empty() && !run.requests.empty(); }

std::vector<double> steadyRequestTimes(const RunMeasurement& run, int warmup_steps) {
  return steadySteps(run.requests, warmup_steps, [](const StepSample& step) { return step.end_s - step.start_s; });
}

std::string Metric::name() const {
  static constexpr const char* kMeasures[] = {"end_to_end",  "first_step",  "compile",     "steady_step",
                                              "request_p50", "request_p99", "request_mean"};
  return std::string(kMeasures[static_cast<int>(measure)]) + (clock == Clock::kWall ? "_wall" : "_cpu");
}

std::string Metric::title() const {
  static constexpr const char* kMeasures[] = {"end-to-end",          "first-step",          "compile",
                                              "steady-state step",   "p50 request latency", "p99 request latency",
                                              "mean request latency"};
  return std::string(kMeasures[static_cast<int>(measure)]) + (clock == Clock::kWall ? " wall time" : " CPU time");
}

const std::vector<Metric>& allMetrics() {
  static const std::vector<Metric> metrics = [] {
    std::vector<Metric> all;
    for (const Measure measure : {Measure::kEndToEnd, Measure::kFirstStep, Measure::kCompile, Measure::kSteadyStep}) {
      for (const Clock clock : {Clock::kWall, Clock::kCpu}) all.push_back({measure, clock});
    }
    for (const Measure measure : {Measure::kRequestP50, Measure::kRequestP99, Measure::kRequestMean}) {
      all.push_back({measure, Clock::kWall});
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
      return base::median(wall ? steadyStateStepTimes(run, warmup_steps) : steadyStateStepCpu(run, warmup_steps),
                          kNoStepsIsUnknown);
    case Measure::kRequestP50:
    case Measure::kRequestP99:
    case Measure::kRequestMean: {
      if (!wall || !isInference(run)) return -1;
      const std::vector<double> latencies = steadyRequestTimes(run, warmup_steps);
      if (latencies.empty()) return -1;
      if (metric.measure == Measure::kRequestMean) {
        double total = 0;
        for (const double latency : latencies) total += latency;
        return total / static_cast<double>(latencies.size());
      }
      return base::quantile(latencies, metric.measure == Measure::kRequestP50 ? 0.5 : 0.99, kNoStepsIsUnknown);
    }
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
  // An inference job's requests are the launcher's (timed outside compiled code in every variant alike).
  std::erase_if(*steps, [](const store::Step& step) { return step.source == "request"; });
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
