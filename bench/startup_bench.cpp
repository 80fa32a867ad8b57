// Start-up cost of the command line: wall time, CPU time and peak RSS of `torchscope --version` and `torchscope
// stats` on a small store, against baselines started the same way in the same run (/bin/true and, where installed,
// `sqlite3 :memory: .quit`), and of the Qt and libtorch tools (`--help`) that the core starts for `gui` and
// `optimize`. Commands run interleaved (A B C ... A B C ...) so that changes in load hit every one alike.
// Usage: bench_startup [BIN_DIR] [REPETITIONS] [OTHER_BIN_DIR]
// BIN_DIR: where torchscope is (default: the build's bin/); OTHER_BIN_DIR: another build's bin/ (an earlier version,
// say) whose `torchscope --version` and `stats` run interleaved with the rest.
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "torchscope/base/Statistics.h"
#include "torchscope/store/Writer.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace st = torchscope::store;
using torchscope::base::median;

struct Command {
  std::string label;
  std::vector<std::string> argv;
  std::vector<double> wall_ms;
  std::vector<double> cpu_ms;
  std::vector<double> rss_mb;
};

struct Sample {
  double wall_ms = 0;
  double cpu_ms = 0;
};

constexpr const char* kGnuTime = "/usr/bin/time";
constexpr int kRssRuns = 3;

double milliseconds(const timeval& time) { return static_cast<double>(time.tv_sec) * 1e3 + static_cast<double>(time.tv_usec) / 1e3; }

posix_spawn_file_actions_t discardOutput() {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  return actions;
}

// Spawns argv with its output discarded and waits for it; false unless it exits with 0.
bool spawnAndWait(std::vector<std::string> arguments, rusage* usage) {
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions = discardOutput();
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return false;
  int status = 0;
  if (wait4(pid, &status, 0, usage) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Wall time around spawn and wait, CPU time from the child's rusage.
bool timeOnce(const Command& command, Sample& sample) {
  rusage usage{};
  const auto begin = std::chrono::steady_clock::now();
  if (!spawnAndWait(command.argv, &usage)) return false;
  sample.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  sample.cpu_ms = milliseconds(usage.ru_utime) + milliseconds(usage.ru_stime);
  return true;
}

// Peak RSS from GNU time, a small process of its own: the spawning process's rusage would not do, because a child
// created with vfork or fork starts in its parent's memory and Linux counts that in the child's peak.
bool peakRss(const Command& command, const std::string& usage_file, double& rss_mb) {
  std::vector<std::string> arguments = {kGnuTime, "-f", "%M", "-o", usage_file};
  arguments.insert(arguments.end(), command.argv.begin(), command.argv.end());
  if (!spawnAndWait(arguments, nullptr)) return false;
  double rss_kib = 0;
  std::ifstream usage(usage_file);
  if (!(usage >> rss_kib)) return false;
  rss_mb = rss_kib / 1024.0;
  return true;
}

// A store like a short traced run: a few hundred kernels, launch calls and steps.
void writeSmallStore(const std::string& path) {
  fs::remove(path);
  auto writer = st::Writer::open(path);
  if (!writer) {
    fmt::print(stderr, "cannot create {}: {}\n", path, writer.error().message);
    std::exit(1);
  }
  st::RunInfo run;
  run.command_line = "python train.py";
  run.start_ns = 1'000'000'000;
  run.source = "bench";
  (*writer)->setRun(run);
  for (std::int64_t i = 0; i < 500; ++i) {
    st::Kernel kernel;
    kernel.start_ns = run.start_ns + i * 20'000;
    kernel.end_ns = kernel.start_ns + 10'000;
    kernel.name = "void at::native::vectorized_elementwise_kernel<4>";
    kernel.correlation_id = i;
    (*writer)->add(kernel);
    st::ApiCall launch;
    launch.start_ns = kernel.start_ns - 8'000;
    launch.end_ns = kernel.start_ns - 2'000;
    launch.name = "cudaLaunchKernel";
    launch.api = "runtime";
    launch.correlation_id = i;
    (*writer)->add(launch);
  }
  for (std::int64_t i = 0; i < 10; ++i) {
    st::Step step;
    step.index = i;
    step.start_ns = run.start_ns + i * 1'000'000;
    step.end_ns = step.start_ns + 1'000'000;
    step.source = "optimizer";
    (*writer)->add(step);
  }
  if (auto closed = (*writer)->close(run.start_ns + 10'000'000); !closed) {
    fmt::print(stderr, "cannot write {}: {}\n", path, closed.error().message);
    std::exit(1);
  }
}

fs::path selfDirectory() {
  char buffer[PATH_MAX] = {};
  const ssize_t length = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  return length > 0 ? fs::path(std::string(buffer, static_cast<std::size_t>(length))).parent_path() : fs::current_path();
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path bin = argc > 1 ? fs::path(argv[1]) : selfDirectory().parent_path() / "bin";
  const int repetitions = argc > 2 ? std::max(3, std::atoi(argv[2])) : 30;
  if (!fs::exists(kGnuTime)) {
    fmt::print(stderr, "{} (GNU time) is needed to measure the commands' CPU time and peak RSS\n", kGnuTime);
    return 1;
  }
  const std::string store = (fs::temp_directory_path() / fmt::format("torchscope_startup_{}.db", getpid())).string();
  const std::string usage_file = (fs::temp_directory_path() / fmt::format("torchscope_startup_{}.usage", getpid())).string();
  writeSmallStore(store);

  std::vector<Command> commands = {{"`/bin/true` (baseline)", {"/bin/true"}, {}, {}, {}}};
  if (fs::exists("/usr/bin/sqlite3")) commands.push_back({"`sqlite3 :memory: .quit` (baseline)", {"/usr/bin/sqlite3", ":memory:", ".quit"}, {}, {}, {}});
  const std::string core = (bin / "torchscope").string();
  commands.push_back({"`torchscope --version`", {core, "--version"}, {}, {}, {}});
  commands.push_back({"`torchscope stats small.db`", {core, "stats", store}, {}, {}, {}});
  if (argc > 3) {
    const std::string other = (fs::path(argv[3]) / "torchscope").string();
    commands.push_back({fmt::format("`torchscope --version` ({})", argv[3]), {other, "--version"}, {}, {}, {}});
    commands.push_back({fmt::format("`torchscope stats small.db` ({})", argv[3]), {other, "stats", store}, {}, {}, {}});
  }
  for (const char* tool : {"torchscope-gui", "torchscope-optimize"}) {
    if (fs::exists(bin / tool)) commands.push_back({fmt::format("`{} --help`", tool), {(bin / tool).string(), "--help"}, {}, {}, {}});
  }

  for (auto& command : commands) {  // one untimed run each: page cache and dynamic loader caches warm
    Sample sample;
    if (!timeOnce(command, sample)) {
      fmt::print(stderr, "'{}' failed to run\n", command.label);
      return 1;
    }
  }
  for (int r = 0; r < repetitions; ++r) {
    for (auto& command : commands) {
      Sample sample;
      if (!timeOnce(command, sample)) {
        fmt::print(stderr, "'{}' failed to run\n", command.label);
        return 1;
      }
      command.wall_ms.push_back(sample.wall_ms);
      command.cpu_ms.push_back(sample.cpu_ms);
    }
  }
  for (int r = 0; r < kRssRuns; ++r) {
    for (auto& command : commands) {
      double rss_mb = 0;
      if (!peakRss(command, usage_file, rss_mb)) {
        fmt::print(stderr, "'{}' failed to run under {}\n", command.label, kGnuTime);
        return 1;
      }
      command.rss_mb.push_back(rss_mb);
    }
  }
  fs::remove(store);
  fs::remove(usage_file);

  const double baseline_ms = median(commands.front().wall_ms);
  fmt::print("{} interleaved runs of each command; times in ms; peak RSS in MB (the most of {} runs under GNU time)\n\n",
             repetitions, kRssRuns);
  fmt::print("| command | wall median | wall min | wall max | CPU median | peak RSS | wall / `/bin/true` |\n");
  fmt::print("|---|---|---|---|---|---|---|\n");
  for (const auto& command : commands) {
    const auto [min_wall, max_wall] = std::minmax_element(command.wall_ms.begin(), command.wall_ms.end());
    fmt::print("| {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.1f} | {:.1f}x |\n", command.label, median(command.wall_ms),
               *min_wall, *max_wall, median(command.cpu_ms), *std::max_element(command.rss_mb.begin(), command.rss_mb.end()),
               median(command.wall_ms) / baseline_ms);
  }
  return 0;
}
