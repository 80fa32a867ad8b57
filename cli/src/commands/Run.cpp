// torchscope run: runs a job with the collector preloaded and says where its store is.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "Commands.h"
#include "LiveStatus.h"
#include "Output.h"
#include "torchscope/base/Settings.h"
#include "torchscope/compiler/FixCatalog.h"
#include "torchscope/compiler/JobEnvironment.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/RunFolder.h"
#include "torchscope/store/Writer.h"

namespace torchscope::cli {

namespace {

namespace fs = std::filesystem;

volatile sig_atomic_t job_pid = 0;

// Signals meant for the job that reach only torchscope (kill <pid>) are passed on.
void forwardSignal(int signal_number) {
  if (job_pid > 0) kill(job_pid, signal_number);
}

// The capture window (docs/collector.md, *Capture window*): what the collector keeps besides compile events.
struct WindowOptions {
  std::string steps;    // "A:B" or "A:"
  double delay_s = -1;  // -1: not given
  double duration_s = -1;
  std::string capture_range;  // "cuda-profiler"
  bool signal_toggle = false;
};

// --steps A:B (or A:): each bound checked by the number validator the other options use.
CLI::Validator stepRange() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        const std::size_t colon = input.find(':');
        if (colon == std::string::npos)
          return "must be A:B (steps A to B-1) or A: (step A to the end), not '" + input + "'";
        std::string first = input.substr(0, colon);
        std::string end = input.substr(colon + 1);
        const auto bound = numberIn<std::int64_t>(0, std::int64_t{1} << 50);
        if (std::string problem = bound(first); !problem.empty()) return "A " + problem;
        if (end.empty()) return {};
        if (std::string problem = bound(end); !problem.empty()) return "B " + problem;
        if (std::stoll(end) <= std::stoll(first)) return "B must be greater than A, not '" + input + "'";
        return {};
      },
      "");
}

// The job's environment (compiler/JobEnvironment.h, as `fix` builds it): the collector after the user's preloads,
// the store, and the settings the options give.
compiler::JobEnvironment runEnvironment(const std::string& store_path, bool summary, bool status_line,
                                        const WindowOptions& window, int sample_hz) {
  namespace settings = base::settings;
  compiler::JobRequest request;
  request.collector_library = installation().collector_library;
  request.store_path = store_path;
  // Runtime fixes asked for in the environment (TORCHSCOPE_FIXES=eager: the job with compilation off) reach every
  // traced process through the bridge's torch-import hook, from torchscope's own compiler folder.
  request.compiler_python_dir = installation().compiler_python_dir;
  auto& given = request.settings;
  if (!summary) given.emplace_back(&settings::kSummary, "0");
  // The collector's summary at exit then starts by erasing the status line it would otherwise follow.
  given.emplace_back(&settings::kStatusLine, status_line ? "1" : "");
  // The window options replace any window the environment asked for; without them, that stays.
  if (!window.steps.empty() || window.delay_s >= 0 || window.duration_s >= 0 || !window.capture_range.empty() ||
      window.signal_toggle) {
    given.emplace_back(&settings::kWindowSteps, window.steps);
    given.emplace_back(&settings::kWindowDelayS, window.delay_s >= 0 ? std::to_string(window.delay_s) : "");
    given.emplace_back(&settings::kWindowDurationS, window.duration_s >= 0 ? std::to_string(window.duration_s) : "");
    given.emplace_back(&settings::kWindowCaptureRange, window.capture_range);
    given.emplace_back(&settings::kWindowSignal, window.signal_toggle ? "1" : "");
  }
  // --sample-hz replaces TORCHSCOPE_SAMPLE_HZ; without it (-1), the environment's stays (the collector's default).
  if (sample_hz >= 0) given.emplace_back(&settings::kSampleHz, std::to_string(sample_hz));
  return compiler::jobEnvironment(request);
}

// Starts the job; returns its pid, or fails with the reason exec() gave.
pid_t startJob(const std::vector<std::string>& command, const std::string& store_path, bool summary, bool status_line,
               const WindowOptions& window, int sample_hz) {
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) fail(kExitFailure, std::string("cannot start the job: ") + std::strerror(errno));
  // Built before fork: the child only execs.
  std::vector<std::string> environment =
      compiler::environmentWith(runEnvironment(store_path, summary, status_line, window, sample_hz));
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (const std::string& argument : command) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) fail(kExitFailure, std::string("cannot start the job: ") + std::strerror(errno));
  if (pid == 0) {
    close(status_pipe[0]);
    execvpe(argv[0], argv.data(), envp.data());
    const int exec_errno = errno;
    ssize_t ignored = write(status_pipe[1], &exec_errno, sizeof(exec_errno));
    (void)ignored;
    _exit(127);
  }
  close(status_pipe[1]);
  int exec_errno = 0;
  const ssize_t got = read(status_pipe[0], &exec_errno, sizeof(exec_errno));
  close(status_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof(exec_errno))) {
    waitpid(pid, nullptr, 0);
    fail(kExitFailure, "cannot run '" + command.front() + "': " + std::strerror(exec_errno));
  }
  return pid;
}

// The job's exit status as a shell reports it: the exit code, or 128+n after signal n.
int waitForJob(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return kExitFailure;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitFailure;
}

// The collector cannot see how the job ends; the launcher records it in the job's store.
void recordExitCode(const std::string& store_path, int exit_code) {
  auto reader = store::Reader::open(store_path);
  if (!reader) return;
  auto run = (*reader)->run();
  reader.value().reset();
  if (!run) return;
  auto writer = store::Writer::open(store_path, store::WriterOptions{store::OpenMode::kAppend});
  if (!writer) return;
  run->exit_code = exit_code;
  (*writer)->setRun(*run);
  (void)(*writer)->close();
}

// Stores of the job's other processes: <stem>[.rank<r>].<pid>.db next to the main one.
std::vector<fs::path> childStores(const fs::path& main_store) {
  std::vector<fs::path> found;
  std::error_code error;
  const std::string prefix = main_store.stem().string() + ".";
  const std::string extension = main_store.extension().string();
  for (const auto& entry : fs::directory_iterator(main_store.parent_path(), error)) {
    const std::string name = entry.path().filename().string();
    if (entry.path() != main_store && name.rfind(prefix, 0) == 0 && entry.path().extension() == extension) {
      found.push_back(entry.path());
    }
  }
  return found;
}

}  // namespace

void addRunCommand(CLI::App& app) {
  struct Options {
    std::string output;
    bool no_summary = false;
    WindowOptions window;
    int sample_hz = -1;  // -1: TORCHSCOPE_SAMPLE_HZ, else the collector's default
    std::vector<std::string> command;
  };
  auto options = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("run", "Run a job under the collector and write its store");
  cmd->footer(
      "Example: torchscope run -o run.db -- python train.py --epochs 1\n"
      "The job's stdin, stdout and stderr are untouched and its exit code is passed on (128+n when\n"
      "signal n ended it). On a terminal, one status line shows the job's elapsed time, steps and compilations\n"
      "while it runs (none when stderr is not a terminal). Other processes of the job, and every rank of a distributed "
      "job, write\n"
      "<stem>[.rank<r>].<pid>.db next to the store. A distributed job:\n"
      "  torchscope run -o runs/job1/ -- torchrun --nproc_per_node=4 train.py\n"
      "writes a run folder (run.db for torchrun, run.rank<r>.<pid>.db per rank) that advise, stats,\n"
      "export and compare read whole.\n"
      "Every Python thread's stack is sampled 100 times a second (host time by line of the job's code in advise and\n"
      "stats, and the flame graph), or less often where a sample costs more than 0.3 % of a core\n"
      "(" +
      std::string(base::settings::kSampleBudget.name) +
      "): --sample-hz N sets the rate (at most 1000), --sample-hz 0 turns it off.\n"
      "A capture window keeps steps, syncs, collectives, memory and GPU records of part of the run only\n"
      "(compiles, graph breaks and recompiles are always kept); at most one of:\n"
      "  --steps 100:150                   steps 100 to 149\n"
      "  --delay 30 --duration 10          from 30 s after the start, for 10 s (either alone: from it / until it)\n"
      "  --capture-range cuda-profiler     between torch.cuda.profiler.start() and stop() (GPU builds)\n"
      "  --signal-toggle                   closed at first; each SIGUSR2 (kill -USR2 <job or torchscope pid>)\n"
      "                                    opens or closes it; a handler the job sets for SIGUSR2 still runs");
  cmd->add_option("-o,--output", options->output,
                  "Store to write (default: torchscope-<pid>.db in the current directory); a directory, or a path "
                  "ending in '/', is a run folder holding one store per process");
  cmd->add_flag("--no-summary", options->no_summary, "Do not print the job's one-line summary at exit");
  // At most the collector's kMaxSampleHz (collector/src/StackSampler.h).
  cmd->add_option("--sample-hz", options->sample_hz,
                  "Sample every Python thread's stack N times a second (default 100, or " +
                      std::string(base::settings::kSampleHz.name) + "); 0: off")
      ->type_name("N")
      ->check(numberIn(0, 1000));
  auto* steps = cmd->add_option("--steps", options->window.steps, "Keep steps A to B-1 only (A: to the end)")
                    ->type_name("A:B")
                    ->check(stepRange());
  auto* delay = cmd->add_option("--delay", options->window.delay_s, "Open the window SEC seconds after the start")
                    ->type_name("SEC")
                    ->check(numberIn(0.0, 1e9));
  auto* duration =
      cmd->add_option("--duration", options->window.duration_s, "Keep SEC seconds from the window's opening")
          ->type_name("SEC")
          ->check(numberIn(1e-3, 1e9));
  auto* range = cmd->add_option("--capture-range", options->window.capture_range,
                                "Open the window at cudaProfilerStart, close it at cudaProfilerStop")
                    ->check(CLI::IsMember({"cuda-profiler"}));
  auto* toggle = cmd->add_flag("--signal-toggle", options->window.signal_toggle,
                               "Start with the window closed; each SIGUSR2 opens or closes it");
  for (CLI::Option* mode : {steps, delay, duration}) {
    mode->excludes(range)->excludes(toggle);
  }
  steps->excludes(delay)->excludes(duration);
  range->excludes(toggle);
  cmd->add_option("command", options->command, "The job: a command and its arguments, after --")->required();
  cmd->callback([options] {
    std::error_code error;
    fs::path store_path = options->output;
    if (!store_path.empty()) {
      const bool run_folder = options->output.back() == '/' || fs::is_directory(store_path, error);
      store_path = fs::absolute(store_path, error).lexically_normal();
      if (run_folder) {
        // One store per process (per rank) inside it; the job's first process writes run.db.
        fs::create_directories(store_path, error);
        if (!fs::is_directory(store_path, error)) fail(kExitUsage, options->output + ": cannot create the run folder");
        store_path /= std::string(store::kRunFolderStoreName);
      } else {
        // The job's own files (its script, its data) are never its store.
        checkOutput(options->output, options->command);
      }
    }
    if (store_path.empty()) store_path = fs::current_path(error) / ("torchscope-" + std::to_string(getpid()) + ".db");
    if (!fs::exists(installation().collector_library, error)) {
      fail(kExitFailure, installation().collector_library +
                             ": collector library not found (build torchscope_collector or set " +
                             std::string(base::settings::kCollectorLibrary.name) + ")");
    }
    // Said before the job runs, not as a missing store after it.
    if (::access(store_path.parent_path().c_str(), W_OK) != 0) {
      fail(kExitFailure, store_path.parent_path().string() + ": cannot write the store there (" + std::strerror(errno) + ")");
    }
    const bool status_line = LiveStatus::onTerminal();
    const auto started = std::chrono::system_clock::now();
    const pid_t pid = startJob(options->command, store_path.string(), !options->no_summary, status_line,
                               options->window, options->sample_hz);
    // While the job runs a Ctrl-C belongs to it (the terminal sends it to both); signals sent to
    // torchscope alone are passed on. The job was forked before this, so it keeps its defaults.
    job_pid = pid;
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction forward {};
    forward.sa_handler = &forwardSignal;
    struct sigaction old_int {
    }, old_quit{}, old_term{}, old_hup{}, old_usr2{};
    sigaction(SIGINT, &ignore, &old_int);
    sigaction(SIGQUIT, &ignore, &old_quit);
    sigaction(SIGTERM, &forward, &old_term);
    sigaction(SIGHUP, &forward, &old_hup);
    // The window's toggle, sent to torchscope, goes to the job's first process.
    if (options->window.signal_toggle) sigaction(SIGUSR2, &forward, &old_usr2);
    int exit_code = 0;
    {
      LiveStatus status("torchscope", status_line);
      status.watch("", store_path.string(), started);
      exit_code = waitForJob(pid);
    }
    job_pid = 0;
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGHUP, &old_hup, nullptr);
    if (options->window.signal_toggle) sigaction(SIGUSR2, &old_usr2, nullptr);

    if (fs::exists(store_path, error)) {
      recordExitCode(store_path.string(), exit_code);
      const std::size_t children = childStores(store_path).size();
      std::cerr << "torchscope: store written to " << store_path.string();
      if (children > 0) std::cerr << " (and " << children << " for the job's other processes, next to it)";
      std::cerr << "\n";
    } else if (const std::size_t ranks = childStores(store_path).size(); ranks > 0) {
      // The launcher is not Python (mpirun, srun): only its ranks wrote stores.
      std::cerr << "torchscope: " << ranks << " stores written next to " << store_path.string() << "\n";
    } else {
      std::cerr << "torchscope: " << store_path.string()
                << ": no store was written (the job is neither a Python process nor a program with libtorch or a GPU, "
                   "Python ran with -S/-I/-E, or the collector could not write it: see the job's stderr)\n";
    }
    throw CommandExit{exit_code};
  });
}

}  // namespace torchscope::cli
