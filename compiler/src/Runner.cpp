#include "Runner.h"

#include "torchscope/compiler/FixCatalog.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "torchscope/base/Settings.h"
#include "torchscope/compiler/JobEnvironment.h"
#include "torchscope/compiler/Parity.h"
#include "torchscope/compiler/Process.h"
#include "torchscope/compiler/Statistics.h"

namespace torchscope::compiler {
namespace fs = std::filesystem;

// The last `count` non-empty lines of `text`, joined by " | ".
std::string lastLines(const std::string& text, int count) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    if (end > begin) lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  std::string tail;
  for (std::size_t i = lines.size() > static_cast<std::size_t>(count) ? lines.size() - count : 0; i < lines.size(); ++i) {
    tail += (tail.empty() ? "" : " | ") + lines[i];
  }
  return tail;
}

namespace {

// The median of a figure no run measured: -1 (unknown) for counts and sizes, 0 for times.
constexpr base::QuantileRule kUnmeasuredIsUnknown{.empty = -1, .interpolation = kQuantileRule.interpolation};
constexpr base::QuantileRule kUnmeasuredIsZero{.empty = 0, .interpolation = kQuantileRule.interpolation};

std::int64_t medianCount(const std::vector<RunMeasurement>& runs, std::int64_t RunMeasurement::*field) {
  std::vector<double> values;
  for (const auto& run : runs) {
    if (run.*field >= 0) values.push_back(static_cast<double>(run.*field));
  }
  return static_cast<std::int64_t>(std::llround(base::median(std::move(values), kUnmeasuredIsUnknown)));
}

}  // namespace

Runner::Runner(JobLayout job, const FixOptions& options, fs::path temp_root)
    : job_(std::move(job)), options_(options), temp_root_(std::move(temp_root)) {
  std::error_code error;
  collector_ = options_.use_collector && !options_.collector_library.empty() &&
               fs::is_regular_file(options_.collector_library, error);
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &allowed)) cpus_.push_back(cpu);
    }
  }
}

std::vector<int> Runner::cpusOfSlot(int slot) const {
  const auto parallel = static_cast<std::size_t>(std::max(options_.parallel_runs, 1));
  if (parallel == 1 || cpus_.size() < parallel) return {};
  const std::size_t share = cpus_.size() / parallel;
  const auto first = cpus_.begin() + static_cast<std::ptrdiff_t>(share * static_cast<std::size_t>(slot));
  return {first, first + static_cast<std::ptrdiff_t>(share)};
}

std::string Runner::parallelismNote() const {
  if (options_.parallel_runs <= 1) return "";
  const std::vector<int> share = cpusOfSlot(0);
  if (share.empty()) {
    return fmt::format("runs {} at a time, unpinned: this process may use only {} CPUs", options_.parallel_runs,
                       cpus_.size());
  }
  return fmt::format("runs {} at a time, each pinned to {} of the {} CPUs with as many threads",
                     options_.parallel_runs, share.size(), cpus_.size());
}

void Runner::seedCompileCache() {
  if (options_.shared_compile_cache) return;
  const fs::path seed = temp_root_ / "compile-cache-seed";
  ProcessSpec spec;
  spec.argv = {job_.python, "-c",
               "from torch._inductor import cpu_vec_isa\n"
               "cpu_vec_isa.valid_vec_isa_list()"};
  spec.environment["TORCHINDUCTOR_CACHE_DIR"] = (seed / "inductor").string();
  spec.timeout = std::chrono::seconds(300);
  const auto probed = runProcess(spec);
  std::error_code error;
  if (probed && probed->exit_code == 0 && fs::is_directory(seed / "inductor", error)) compile_cache_seed_ = seed;
}

std::string Runner::pythonPath() const {
  const char* existing = std::getenv("PYTHONPATH");
  return listWith(existing != nullptr ? existing : "", options_.compiler_python_dir, ':');
}

Result<RunMeasurement> Runner::run(const Variant& variant, const std::string& label, int slot) const {
  const fs::path folder = temp_root_ / "runs" / label;
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) return makeError(ErrorCode::kIo, "cannot create " + folder.string());

  ProcessSpec spec;
  if (job_.distributed()) {
    // torchrun starts the launcher in every rank (`-m`), each writing its own report.
    spec.argv = job_.launcher;
  } else {
    spec.argv.push_back(job_.python);
    spec.argv.insert(spec.argv.end(), job_.python_options.begin(), job_.python_options.end());
  }
  const std::string report_path = (folder / (job_.distributed() ? "launch.rank{rank}.json" : "launch.json")).string();
  for (const char* word : {"-m", "torchscope_compiler.launch", "--report"}) spec.argv.emplace_back(word);
  spec.argv.push_back(report_path);
  if (options_.window_steps > 0) {
    // Ends the job cleanly at a step boundary (its finally blocks and atexit handlers run): the rest of
    // a long run is never run, so it is never counted.
    spec.argv.emplace_back("--stop-after-steps");
    spec.argv.push_back(std::to_string(std::max(options_.warmup_steps, 0) + options_.window_steps));
  }
  spec.argv.emplace_back("--");
  if (job_.module.empty()) {
    spec.argv.push_back(inCopy(job_, variant.copy_root, job_.script).string());
  } else {
    spec.argv.emplace_back("-m");
    spec.argv.push_back(job_.module);
  }
  spec.argv.insert(spec.argv.end(), job_.arguments.begin(), job_.arguments.end());
  spec.working_directory = inCopy(job_, variant.copy_root, job_.working_directory).string();
  RunMeasurement measurement;
  JobRequest request;
  if (collector_) {
    measurement.store_path = (folder / "run.db").string();
    request.collector_library = options_.collector_library;
    request.store_path = measurement.store_path;
  }
  request.compiler_python_dir = options_.compiler_python_dir;
  request.launcher = true;
  request.runtime_fixes = variant.runtime_specs;
  request.command_line = job_.command_line;  // the store names the user's command, not the launcher around it
  if (options_.allow_test_fixes) request.settings.emplace_back(&base::settings::kTestFixes, "1");
  // The bridge's op census slows one step of an eager job only: variants must run the same collector.
  request.settings.emplace_back(&base::settings::kCensus, "0");
  JobEnvironment job_environment = jobEnvironment(request);
  spec.environment = std::move(job_environment.set);
  spec.unset_environment = std::move(job_environment.unset);
  // A private compile cache per run, holding none of the job's graphs: every variant pays the same
  // cold compile, and no run profits from graphs an earlier run of another variant left behind.
  const fs::path cache = folder / "compile-cache";
  if (!options_.shared_compile_cache) {
    if (!compile_cache_seed_.empty()) fs::copy(compile_cache_seed_, cache, fs::copy_options::recursive, error);
    spec.environment["TORCHINDUCTOR_CACHE_DIR"] = (cache / "inductor").string();
    spec.environment["TRITON_CACHE_DIR"] = (cache / "triton").string();
  }
  spec.cpus = cpusOfSlot(slot);
  if (!spec.cpus.empty() && std::getenv("OMP_NUM_THREADS") == nullptr) {
    spec.environment["OMP_NUM_THREADS"] = std::to_string(spec.cpus.size());  // torch's intra-op threads
  }
  spec.stdout_path = (folder / "stdout.txt").string();
  spec.stderr_path = (folder / "stderr.txt").string();
  measurement.stderr_path = spec.stderr_path;
  spec.timeout = options_.run_timeout;

  if (options_.on_run) options_.on_run(label, measurement.store_path, true);
  auto process = runProcess(spec);
  if (options_.on_run) options_.on_run(label, measurement.store_path, false);
  if (!options_.keep_temp) fs::remove_all(cache, error);
  if (!process) return process.error();
  measurement.wall_s = process->wall_s;
  measurement.cpu_s = process->cpu_s;
  measurement.peak_rss_bytes = process->peak_rss_bytes;
  measurement.exit_code = process->exit_code;
  if (job_.distributed()) {
    readRanks(folder, options_.parity_pattern, measurement);
    if (measurement.exit_code != 0 && measurement.error_tail.empty()) {
      measurement.error_tail = lastLines(readTextFile(spec.stderr_path), 3);
    }
    return measurement;
  }
  (void)readLauncherReport(report_path, measurement);  // absent when the job died hard: no steps then
  if (collector_ && fs::exists(measurement.store_path)) (void)readStore(measurement.store_path, measurement);
  if (measurement.exit_code != 0) measurement.error_tail = lastLines(readTextFile(spec.stderr_path), 3);
  auto values = extractParityValues(readTextFile(spec.stdout_path), options_.parity_pattern);
  if (values) measurement.parity_values = std::move(*values);
  return measurement;
}

std::string Runner::describeFailure(const RunMeasurement& run) const {
  const std::string where = options_.keep_temp ? "its whole stderr: " + run.stderr_path
                                               : "rerun with --keep-temp to keep its whole stderr";
  return fmt::format("exit {}: {}; {}", run.exit_code, run.error_tail.empty() ? "no output on stderr" : run.error_tail,
                     where);
}

Result<std::string> Runner::rewrite(const fs::path& copy_root, const std::vector<std::string>& specs,
                                    const std::optional<std::vector<fs::path>>& executed, std::string* notes) {
  std::string joined;
  for (const auto& spec : specs) joined += (joined.empty() ? "" : ",") + spec;
  ProcessSpec spec;
  // In torchscope's environment when preflight found LibCST there: the job's own environment may not have it.
  spec.argv = {tool_python_.empty() ? job_.python : tool_python_,
               "-m",
               "torchscope_compiler.rewrite",
               "--fix",
               joined,
               "--root",
               copy_root.string(),
               "--in-place"};
  for (const fs::path& file : pythonFiles(inCopy(job_, copy_root, job_.rewriteRoot()))) {
    const fs::path relative = file.lexically_relative(copy_root);
    if (!executed || std::find(executed->begin(), executed->end(), relative) != executed->end()) {
      spec.argv.push_back(file.string());
    }
  }
  spec.environment["PYTHONPATH"] = pythonPath();
  const fs::path folder = temp_root_ / "rewrite";
  std::error_code error;
  fs::create_directories(folder, error);
  spec.stdout_path = (folder / "diff.txt").string();
  spec.stderr_path = (folder / "stderr.txt").string();
  auto process = runProcess(spec);
  if (!process) return process.error();
  if (process->exit_code != 0) {
    return makeError(ErrorCode::kInvalidArgument, fmt::format("the source rewrite failed ({}): {}", joined,
                                                              readTextFile(spec.stderr_path)));
  }
  if (notes != nullptr) *notes = lastLines(readTextFile(spec.stderr_path), 20);
  return readTextFile(spec.stdout_path);
}

std::vector<std::vector<double>> parityValues(const Variant& variant) {
  std::vector<std::vector<double>> values;
  for (const auto& run : variant.runs) values.push_back(run.parity_values);
  return values;
}

std::optional<std::vector<fs::path>> executedFiles(const RunMeasurement& run, const fs::path& copy_root) {
  if (!run.executed_files_known) return std::nullopt;
  std::error_code error;
  const fs::path root = fs::weakly_canonical(copy_root, error);
  std::vector<fs::path> files;
  for (const std::string& file : run.executed_files) {
    const fs::path relative = fs::path(file).lexically_relative(root);
    if (!relative.empty() && *relative.begin() != "..") files.push_back(relative);
  }
  return files;
}

VariantStats summarize(const Variant& variant, int warmup_steps) {
  VariantStats stats;
  std::vector<double> pooled;
  std::vector<double> compile;
  for (const auto& run : variant.runs) {
    ++stats.runs;
    stats.wall_s.push_back(run.wall_s);
    if (run.exit_code != 0) {
      if (stats.failed_runs++ == 0) stats.failure = fmt::format("exit {}: {}", run.exit_code, run.error_tail);
      continue;
    }
    const auto steps = steadyStateStepTimes(run, warmup_steps);
    pooled.insert(pooled.end(), steps.begin(), steps.end());
    compile.push_back(run.compile_time_s);
    for (const Metric& metric : allMetrics()) {
      const double value = metricValue(run, metric, warmup_steps);
      if (value > 0) stats.metrics[metric.name()].runs_s.push_back(value);
    }
  }
  for (auto& [name, summary] : stats.metrics) summary.median_s = median(summary.runs_s);
  stats.step_time_median_s = base::median(std::move(pooled), kUnmeasuredIsZero);
  stats.total_time_s = base::median(stats.wall_s, kUnmeasuredIsZero);
  stats.compile_time_s = base::median(std::move(compile), kUnmeasuredIsZero);
  stats.recompiles = medianCount(variant.runs, &RunMeasurement::recompiles);
  stats.graph_breaks = medianCount(variant.runs, &RunMeasurement::graph_breaks);
  stats.syncs = medianCount(variant.runs, &RunMeasurement::syncs);
  stats.peak_rss_bytes = medianCount(variant.runs, &RunMeasurement::peak_rss_bytes);
  stats.gpu_peak_allocated_bytes = medianCount(variant.runs, &RunMeasurement::gpu_peak_allocated_bytes);
  stats.gpu_peak_reserved_bytes = medianCount(variant.runs, &RunMeasurement::gpu_peak_reserved_bytes);
  return stats;
}

}  // namespace torchscope::compiler
