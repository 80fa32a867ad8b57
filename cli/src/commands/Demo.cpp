// torchscope demo: the whole product on the bundled RDL sample — profile it under the collector,
// print the top findings with their lines, apply the fixes, re-run and print the measured speed-up.
// Each stage is this same executable's own command, run as a child process, so the demo shows
// exactly what a user typing those commands would see.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <vector>

#include "Commands.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/FixIds.h"

namespace torchscope::cli {

namespace {

struct DemoOptions {
  std::string scale = "tiny";
  std::string workdir;
  int repetitions = 3;
  int max_fixes = 2;
  bool profile_only = false;
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

// The runtime fixes of the findings, most impact first, without repeats: the ones the demo measures.
std::vector<std::string> topRuntimeFixes(const std::string& store, int limit) {
  auto analysis = analyzer::analyze({store});
  if (!analysis) fail(kExitFailure, analysis.error().message);
  std::vector<std::string> ids;
  for (const auto& finding : analysis->findings) {
    if (static_cast<int>(ids.size()) >= limit) break;
    if (analyzer::fix::kindOf(finding.fix_id) != analyzer::fix::kRuntime) continue;
    if (std::find(ids.begin(), ids.end(), finding.fix_id) == ids.end()) ids.push_back(finding.fix_id);
  }
  return ids;
}

void stage(int number, const std::string& title) {
  std::cout << fmt::format("\n== {}. {} ==\n", number, title) << std::flush;
}

void runDemo(const DemoOptions& options) {
  const Installation& paths = installation();
  const std::string self = paths.executable_dir + "/torchscope";
  const std::string workdir = options.workdir.empty()
                                  ? (std::filesystem::temp_directory_path() / fmt::format("torchscope-demo-{}", getpid())).string()
                                  : options.workdir;
  std::error_code error;
  std::filesystem::create_directories(workdir, error);
  if (error) fail(kExitUsage, fmt::format("cannot create {}: {}", workdir, error.message()));
  const std::string store = workdir + "/rdl_hm.db";
  const std::vector<std::string> job = {paths.python, "-m", "samples.rdl_hm.train", "--scale", options.scale};

  stage(1, fmt::format("Profile the RDL sample (PyG, H&M-like data, scale '{}') under the collector", options.scale));
  std::vector<std::string> run = {self, "run", "-o", store, "--"};
  run.insert(run.end(), job.begin(), job.end());
  if (const int code = runChild(run, paths.source_dir); code != 0) {
    fail(kExitFailure, fmt::format("the sample failed under the collector (exit code {})", code));
  }

  stage(2, "What torchscope found, most impact first");
  if (const int code = runChild({self, "advise", store}, paths.source_dir); code != 0) {
    fail(kExitFailure, fmt::format("advise failed (exit code {})", code));
  }
  if (options.profile_only) return;

  const std::vector<std::string> fixes = topRuntimeFixes(store, options.max_fixes);
  if (fixes.empty()) {
    std::cout << "\nNo runtime fix to measure: nothing more to do.\n";
    return;
  }
  const std::string fix_list = fmt::format("{}", fmt::join(fixes, ","));
  stage(3, fmt::format("Apply the top fixes ({}), re-run A/B x{} and measure speed-up and parity", fix_list,
                       options.repetitions));
  const int code = runChild(
      {self, "fix", store, "--fixes", fix_list, "--repetitions", std::to_string(options.repetitions)},
      paths.source_dir);
  if (code != 0) fail(kExitFailure, fmt::format("fix failed (exit code {})", code));
  std::cout << fmt::format("\nStore and reports: {}\n", workdir);
}

}  // namespace

void addDemoCommand(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  auto* cmd = app.add_subcommand(
      "demo", "Profile the bundled RDL sample, show the findings, apply the fixes and measure the speed-up");
  cmd->add_option("--scale", options->scale, "Sample size: tiny (default, sized for a CPU), small, or larger ones for a GPU");
  cmd->add_option("--repetitions", options->repetitions, "Interleaved runs per variant when measuring fixes")
      ->check(CLI::Range(1, 50));
  cmd->add_option("--workdir", options->workdir, "Where the stores and reports go (default: a new temp folder)");
  cmd->add_option("--max-fixes", options->max_fixes, "How many of the top runtime fixes to measure (default 2)")
      ->check(CLI::Range(1, 20));
  cmd->add_flag("--profile-only", options->profile_only, "Stop after the findings; do not apply fixes");
  cmd->footer("The sample runs with $TORCHSCOPE_PYTHON (default: the python3 beside torchscope, else python3 on PATH),\n"
              "which needs torch and torch_geometric; scripts/demo.sh sets it to the project's .venv.");
  cmd->callback([options] { runDemo(*options); });
}

}  // namespace torchscope::cli
