#include "torchscope/compiler/Process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace torchscope::compiler {
namespace {

std::vector<std::string> childEnvironment(const ProcessSpec& spec) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const std::string key = text.substr(0, text.find('='));
    const bool replaced = spec.environment.count(key) > 0 ||
                          std::find(spec.unset_environment.begin(), spec.unset_environment.end(), key) !=
                              spec.unset_environment.end();
    if (!replaced) entries.push_back(text);
  }
  for (const auto& [key, value] : spec.environment) entries.push_back(key + "=" + value);
  return entries;
}

int openOutput(const std::string& path) {
  return open(path.empty() ? "/dev/null" : path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

}  // namespace

Result<ProcessResult> runProcess(const ProcessSpec& spec) {
  if (spec.argv.empty()) return makeError(ErrorCode::kInvalidArgument, "no command to run");
  // Everything the child needs is prepared before fork: only async-signal-safe calls after it.
  std::vector<std::string> environment = childEnvironment(spec);
  std::vector<char*> env_pointers;
  for (auto& entry : environment) env_pointers.push_back(entry.data());
  env_pointers.push_back(nullptr);
  std::vector<std::string> arguments = spec.argv;
  std::vector<char*> arg_pointers;
  for (auto& argument : arguments) arg_pointers.push_back(argument.data());
  arg_pointers.push_back(nullptr);
  const int out = openOutput(spec.stdout_path);
  const int err = openOutput(spec.stderr_path);
  if (out < 0 || err < 0) {
    if (out >= 0) close(out);
    if (err >= 0) close(err);
    return makeError(ErrorCode::kIo, "cannot create the output files of " + spec.argv[0]);
  }

  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (const int cpu : spec.cpus) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &cpus);
  }

  // The child reports a failed chdir/exec through this pipe; a successful exec closes it.
  int exec_status[2] = {-1, -1};
  if (pipe2(exec_status, O_CLOEXEC) != 0) {
    close(out);
    close(err);
    return makeError(ErrorCode::kIo, "pipe failed");
  }
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    for (const int fd : {out, err, exec_status[0], exec_status[1]}) close(fd);
    return makeError(ErrorCode::kIo, "fork failed");
  }
  if (pid == 0) {
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    int failure = 0;
    if (!spec.cpus.empty() && sched_setaffinity(0, sizeof(cpus), &cpus) != 0) {
      failure = errno;
    } else if (!spec.working_directory.empty() && chdir(spec.working_directory.c_str()) != 0) {
      failure = errno;
    } else {
      environ = env_pointers.data();
      execvp(arg_pointers[0], arg_pointers.data());
      failure = errno;
    }
    (void)!write(exec_status[1], &failure, sizeof(failure));
    _exit(127);
  }
  for (const int fd : {out, err, exec_status[1]}) close(fd);
  int exec_error = 0;
  const ssize_t reported = read(exec_status[0], &exec_error, sizeof(exec_error));
  close(exec_status[0]);
  if (reported == static_cast<ssize_t>(sizeof(exec_error))) {
    waitpid(pid, nullptr, 0);
    return makeError(ErrorCode::kNotFound, "cannot start '" + spec.argv[0] + "' in '" + spec.working_directory +
                                               "': " + std::strerror(exec_error));
  }

  ProcessResult result;
  int status = 0;
  // wait4's usage is the child's own plus that of every descendant it waited for.
  struct rusage usage {};
  while (true) {
    const pid_t done = wait4(pid, &status, WNOHANG, &usage);
    if (done == pid) break;
    if (done < 0) return makeError(ErrorCode::kIo, "waitpid failed for " + spec.argv[0]);
    if (std::chrono::steady_clock::now() - started > spec.timeout) {
      kill(pid, SIGKILL);
      wait4(pid, &status, 0, &usage);
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto seconds = [](const timeval& time) { return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) / 1e6; };
  result.cpu_s = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  result.peak_rss_bytes = usage.ru_maxrss > 0 ? static_cast<std::int64_t>(usage.ru_maxrss) * 1024 : -1;  // KiB
  if (result.timed_out) {
    result.exit_code = 124;
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

std::string readTextFile(const std::string& path) {
  std::ifstream input(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << input.rdbuf();
  return buffer.str();
}

}  // namespace torchscope::compiler
