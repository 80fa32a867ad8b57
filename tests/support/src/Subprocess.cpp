#include "torchscope/testing/Subprocess.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "torchscope/testing/Paths.h"

namespace torchscope::testing {

namespace fs = std::filesystem;

ProgramOutcome runProgram(const std::vector<std::string>& argv, const ProgramOptions& options) {
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
  ProgramOutcome result;
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

ProgramOutcome runShell(const std::string& command) { return runProgram({"/bin/sh", "-c", command}); }

ProgramOutcome runTorchscope(const std::string& arguments, const std::string& environment) {
  return runShell(environment + " " + torchscopeExecutable().string() + " " + arguments);
}

ProgramOutcome runPython(const std::string& arguments) {
  return runShell(std::string("cd '") + TORCHSCOPE_SOURCE_DIR + "' && '" + TORCHSCOPE_PYTHON + "' " + arguments + " 2>&1");
}

ProgramOutcome runUnderTorchscope(const fs::path& store, const std::vector<std::string>& job,
                                  const ProgramOptions& options) {
  std::vector<std::string> argv = {torchscopeExecutable().string(), "run", "-o", store.string(), "--"};
  argv.insert(argv.end(), job.begin(), job.end());
  return runProgram(argv, options);
}

std::map<std::string, std::string> lineFields(const std::string& output, const std::string& prefix) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::map<std::string, std::string> fields;
    std::istringstream words(line.substr(prefix.size()));
    std::string word;
    while (words >> word) {
      if (const auto equals = word.find('='); equals != std::string::npos) {
        fields[word.substr(0, equals)] = word.substr(equals + 1);
      }
    }
    return fields;
  }
  return {};
}

std::optional<double> numericField(const std::string& output, const std::string& prefix, const std::string& key) {
  const auto fields = lineFields(output, prefix);
  const auto found = fields.find(key);
  if (found == fields.end()) return std::nullopt;
  try {
    return std::stod(found->second);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace torchscope::testing
