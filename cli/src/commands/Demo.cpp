// torchscope demo: the whole product on the bundled RDL sample — profile it under the collector,
// print the findings with their lines, apply the fixes that can help, re-run and print the measured
// speed-up with its interval and the loss parity.
// The profile run is also the first baseline run of the measurement (compiler/Experiment.h); the
// findings are printed by this executable's own `advise`, run as a child process, so the demo shows
// what a user typing that command would see.
#include <fmt/format.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "Commands.h"
#include "FixTools.h"
#include "LiveStatus.h"
#include "Output.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/base/JsonText.h"
#include "torchscope/base/Settings.h"
#include "torchscope/compiler/Experiment.h"
#include "torchscope/compiler/Process.h"
#include "torchscope/compiler/Report.h"

namespace torchscope::cli {

namespace {

namespace tc = torchscope::compiler;

// The sample runs on the CPU: two runs at once when there are two CPUs or more for them.
int defaultParallelRuns() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  return sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) >= 2 ? 2 : 1;
}

struct DemoOptions {
  std::string scale = "demo";
  std::string workdir;
  int repetitions = 3;
  int max_fixes = 1;  // the fix with the most impact: its first two runs share one wave
  bool profile_only = false;
  bool keep_temp = false;
  int parallel_runs = defaultParallelRuns();
};

// Runs argv with the working directory `cwd`, inheriting stdout and stderr; returns the exit code.
int runChild(const std::vector<std::string>& argv, const std::string& cwd) {
  std::cout.flush();
  const pid_t pid = fork();
  if (pid < 0) fail(kExitFailure, "cannot start a process");
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(127);
    std::vector<char*> raw;
    for (const auto& arg : argv) raw.push_back(const_cast<char*>(arg.c_str()));
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// Where the sample's package lies, links resolved: the job runs there. A build tree's share/torchscope/samples is a
// link to the sources, and the findings must name the files the user opens and edits (samples/rdl_hm/model.py),
// not the link they were reached through.
std::string sampleRoot() {
  std::error_code error;
  const auto real = std::filesystem::canonical(std::filesystem::path(installation().source_dir) / "samples", error);
  return error ? installation().source_dir : real.parent_path().string();
}

// Where the user started the demo: `advise` runs there, so that the sample's files are named as paths the user can
// open from there (or relative to the sample's folder, which advise then names).
std::string userDirectory() {
  std::error_code error;
  const auto current = std::filesystem::current_path(error);
  return error ? sampleRoot() : current.string();
}

void stage(int number, const std::string& title) {
  std::cout << fmt::format("\n== {}. {} ==\n", number, title) << std::flush;
}

// --profile-only: one run under the collector and its findings, nothing measured.
void profileOnly(const std::string& self, const std::vector<std::string>& job, const std::string& store,
                 const std::string& scale) {
  stage(1, fmt::format("Profile the RDL sample (PyG, H&M-like data, scale '{}') under the collector", scale));
  std::vector<std::string> run = {self, "run", "-o", store, "--"};
  run.insert(run.end(), job.begin(), job.end());
  if (const int code = runChild(run, sampleRoot()); code != 0) {
    fail(kExitFailure, fmt::format("the sample failed under the collector (exit code {})", code));
  }
  stage(2, "What torchscope found, most impact first");
  if (const int code = runChild({self, "advise", store}, userDirectory()); code != 0) {
    fail(kExitFailure, fmt::format("advise failed (exit code {})", code));
  }
}

// The sample needs torch and torch_geometric: say so before the first run instead of after it.
void checkSamplePython(const std::string& python) {
  const std::string log =
      (std::filesystem::temp_directory_path() / fmt::format("torchscope-demo-python-{}", getpid())).string();
  tc::ProcessSpec spec;
  // find_spec looks for the packages without importing them (seconds for torch).
  spec.argv = {python, "-c",
               "import importlib.util, sys\n"
               "missing = [m for m in ('torch', 'torch_geometric') if importlib.util.find_spec(m) is None]\n"
               "sys.exit('missing: ' + ', '.join(missing) if missing else 0)"};
  spec.stderr_path = log;
  spec.timeout = std::chrono::seconds(60);
  const auto result = tc::runProcess(spec);
  const std::string errors = tc::readTextFile(log);
  std::error_code ignored;
  std::filesystem::remove(log, ignored);
  if (result && result->exit_code == 0) return;
  std::string reason = !result ? result.error().message : fmt::format("exit {}", result->exit_code);
  std::istringstream lines(errors);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) reason = line;
  }
  fail(kExitFailure, fmt::format("the sample needs torch and torch_geometric, and {} cannot import them ({}); set "
                                 "{} to a Python that has them, e.g. the project's .venv/bin/python "
                                 "(scripts/demo.sh does)",
                                 python, reason, base::settings::kPython.name));
}

void runDemo(const DemoOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  const Installation& paths = installation();
  const std::string self = paths.executable_dir + "/torchscope";
  const std::string workdir =
      options.workdir.empty()
          ? (std::filesystem::temp_directory_path() / fmt::format("torchscope-demo-{}", getpid())).string()
          : options.workdir;
  std::error_code error;
  std::filesystem::create_directories(workdir, error);
  if (error) fail(kExitUsage, fmt::format("cannot create {}: {}", workdir, error.message()));
  const std::string store = workdir + "/rdl_hm.db";
  checkSamplePython(paths.python);
  const std::vector<std::string> job = {paths.python, "-m", "samples.rdl_hm.train", "--scale", options.scale};
  if (options.profile_only) {
    profileOnly(self, job, store, options.scale);
    return;
  }

  stage(1, fmt::format("Profile the RDL sample (PyG, H&M-like data, scale '{}') under the collector; this run is "
                       "also the first baseline run of the measurement",
                       options.scale));
  tc::FixOptions fix;
  locateFixTools(fix);
  fix.job_argv = job;
  fix.job_working_directory = sampleRoot();
  fix.repetitions = options.repetitions;
  fix.max_fixes = options.max_fixes;
  fix.keep_temp = options.keep_temp;
  fix.parallel_runs = options.parallel_runs;
  LiveStatus status("torchscope demo", LiveStatus::onTerminal());
  watchRuns(fix, status, std::cout);
  // Runs inside the experiment: it reports problems instead of ending the command.
  fix.on_profiled = [&](const std::string& profile_store) {
    std::error_code copy_error;
    if (profile_store.empty() ||
        !std::filesystem::copy_file(profile_store, store, std::filesystem::copy_options::overwrite_existing,
                                    copy_error)) {
      std::cout << "torchscope demo: no store of the profile run (is libtorchscope_collector.so built?)\n";
      return;
    }
    stage(2, "What torchscope found, most impact first");
    if (const int code = runChild({self, "advise", store}, userDirectory()); code != 0) {
      std::cout << fmt::format("torchscope demo: advise failed (exit code {})\n", code);
    }
    stage(3, "Apply the fixes that can help, re-run baseline and fixes interleaved, measure time and loss parity");
  };
  auto report = tc::runFixExperiment(fix);
  if (!report) fail(kExitFailure, "fix failed: " + report.error().message);

  stage(4, "Result");
  std::cout << analyzer::pathsRelativeTo(tc::renderText(*report), userDirectory());
  writeOutput(workdir + "/fix.json", base::dumpJson(tc::reportJson(*report), 2) + "\n");
  if (auto saved = tc::saveFixExperiments(*report, store); !saved) {
    std::cerr << "torchscope demo: results not saved in the store: " << saved.error().message << "\n";
  }
  const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() / 60;
  std::cout << fmt::format(
      "\nDemo finished in {:.1f} minutes ({} runs of the sample). Store and reports: {} "
      "(rdl_hm.db, fix.json)\n",
      minutes, report->runs, workdir);
}

}  // namespace

void addDemoCommand(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  auto* cmd = app.add_subcommand(
      "demo",
      "Profile the bundled RDL sample, show the findings, apply the fixes that can help and measure their speed-up");
  cmd->add_option("--scale", options->scale,
                  "Sample size: demo (default: tiny's data with one GNN layer and two epochs, sized for a 2-core "
                  "CPU), tiny, small, or larger ones for a GPU");
  cmd->add_option("--repetitions", options->repetitions,
                  "Most runs per variant when measuring fixes (default 3; a fix stops earlier once decided)")
      ->check(numberIn(2, 50));
  cmd->add_option("--workdir", options->workdir, "Where the store and the reports go (default: a new temp folder)");
  cmd->add_option(
         "--max-fixes", options->max_fixes,
         "How many of the fixes with the most impact to measure (default 1: the demo in minutes; the first three are "
         "dynamic-shapes, the source fix of the data-dependent branch at model.py:41 and tensor-lr, in the order "
         "the profile estimates them; each about 2 minutes more on 2 CPUs)")
      ->check(numberIn(1, 20));
  cmd->add_flag("--profile-only", options->profile_only, "Stop after the findings; do not apply fixes");
  cmd->add_flag("--keep-temp", options->keep_temp, "Keep every run's copies and outputs in the temporary folder");
  cmd->add_option("--parallel-runs", options->parallel_runs,
                  "Runs of the sample at once, each pinned to its share of the CPUs (default: 2 with 2 CPUs or more)")
      ->check(numberIn(1, 64));
  cmd->footer("The sample runs with $" + std::string(base::settings::kPython.name) +
              " (default: the python3 beside torchscope, else python3 on PATH),\n"
              "which needs torch and torch_geometric; scripts/demo.sh sets it to the project's .venv.");
  cmd->callback([options] { runDemo(*options); });
}

}  // namespace torchscope::cli
