#include "JobRunner.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace torchscope::test {

namespace fs = std::filesystem;

JobResult runJob(const std::vector<std::string>& argv, const JobOptions& options) {
  int out_pipe[2];
  int err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    close(out_pipe[0]);
    close(err_pipe[0]);
    for (const auto& [key, value] : options.env) {
      if (value.empty()) {
        unsetenv(key.c_str());
      } else {
        setenv(key.c_str(), value.c_str(), 1);
      }
    }
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  JobResult result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  bool signalled = false;
  std::chrono::steady_clock::time_point first_line{};
  while (open_fds > 0) {
    const int timeout = options.terminate_after_line_ms >= 0 && !signalled ? 20 : -1;
    poll(fds, 2, timeout);
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP)) == 0) continue;
      char buffer[4096];
      const ssize_t got = read(fds[i].fd, buffer, sizeof(buffer));
      if (got <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      (i == 0 ? result.out : result.err).append(buffer, static_cast<std::size_t>(got));
    }
    if (options.terminate_after_line_ms >= 0 && !signalled && result.out.find('\n') != std::string::npos) {
      if (first_line == std::chrono::steady_clock::time_point{}) first_line = std::chrono::steady_clock::now();
      if (std::chrono::steady_clock::now() - first_line >= std::chrono::milliseconds(options.terminate_after_line_ms)) {
        kill(pid, SIGTERM);
        signalled = true;
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

fs::path scriptPath(const std::string& name) {
  return fs::path(TORCHSCOPE_SOURCE_DIR) / "tests" / "collector" / "scripts" / name;
}

fs::path collectorLibrary() { return fs::path(TORCHSCOPE_BINARY_DIR) / "lib" / "libtorchscope_collector.so"; }

fs::path torchscopeExecutable() { return fs::path(TORCHSCOPE_BINARY_DIR) / "bin" / "torchscope"; }

int markedLine(const std::string& script, const std::string& tag) {
  std::ifstream in(scriptPath(script));
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find("# MARK:" + tag) != std::string::npos) return number;
  }
  return -1;
}

fs::path freshDirectory(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("torchscope-collector-test-" + std::to_string(getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace torchscope::test
