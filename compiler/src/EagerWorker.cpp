#include "EagerWorker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "OptimizeHelpers.h"
#include "torchscope/compiler/Process.h"

namespace torchscope::compiler {

EagerWorker::~EagerWorker() {
  if (to_child_ >= 0) close(to_child_);  // the worker stops at the end of its input
  if (from_child_ >= 0) close(from_child_);
  if (pid_ > 0) {
    int status = 0;
    for (int waited = 0; waited < 50 && waitpid(pid_, &status, WNOHANG) == 0; ++waited) usleep(100000);
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
}

Result<void> EagerWorker::start(EagerWorkerSpec spec) {
  spec_ = std::move(spec);
  signal(SIGPIPE, SIG_IGN);  // a worker that died is told by write(), not by a signal
  int to_child[2];
  int from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) {
    return makeError(ErrorCode::kUnsupported, "cannot make pipes for " + spec_.name);
  }
  pid_ = fork();
  if (pid_ < 0) return makeError(ErrorCode::kUnsupported, "cannot start " + spec_.name);
  if (pid_ == 0) {
    if (spec_.lend_stdin) {
      const int job_stdin = dup(STDIN_FILENO);  // without O_CLOEXEC: the worker hands it back to the job
      if (job_stdin >= 0) setenv("TORCHSCOPE_JOB_STDIN", std::to_string(job_stdin).c_str(), 1);
    }
    dup2(to_child[0], STDIN_FILENO);
    dup2(from_child[1], STDOUT_FILENO);
    const int err = open(spec_.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, STDERR_FILENO);
    setenv("PYTHONPATH", spec_.python_path.c_str(), 1);
    setenv("PYTHONWARNINGS", "ignore", 1);
    std::vector<char*> args;
    for (const auto& arg : spec_.argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  to_child_ = to_child[1];
  from_child_ = from_child[0];
  return {};
}

Error EagerWorker::stopped(const std::string& what) const {
  return makeError(ErrorCode::kUnsupported,
                   spec_.name + " " + what + ": " + lastHelperLine(readTextFile(spec_.stderr_path.string())));
}

Result<void> EagerWorker::awaitReady() {
  auto ready = readLine();
  if (!ready || *ready != "ready") return stopped("did not start");
  return {};
}

int EagerWorker::exitCode() {
  if (pid_ > 0) {
    int status = 0;
    if (waitpid(pid_, &status, 0) == pid_) {
      status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    pid_ = -1;
  }
  return status_;
}

Result<std::string> EagerWorker::readLine() {
  for (;;) {
    const auto newline = buffered_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffered_.substr(0, newline);
      buffered_.erase(0, newline + 1);
      return line;
    }
    pollfd ready{from_child_, POLLIN, 0};
    if (poll(&ready, 1, 600000) <= 0) return makeError(ErrorCode::kUnsupported, spec_.name + " stopped answering");
    char chunk[4096];
    const ssize_t got = read(from_child_, chunk, sizeof chunk);
    if (got <= 0) return stopped("stopped");
    buffered_.append(chunk, static_cast<std::size_t>(got));
  }
}

Result<std::string> EagerWorker::request(const std::string& line) {
  const std::string command = line + "\n";
  if (write(to_child_, command.data(), command.size()) != static_cast<ssize_t>(command.size())) {
    return stopped("stopped");
  }
  auto answer = readLine();
  if (!answer) return answer.error();
  if (answer->rfind("error ", 0) == 0) {
    return makeError(ErrorCode::kUnsupported, spec_.name + " failed: " + answer->substr(6));
  }
  return answer;
}

Result<void> EagerWorker::loadInputs(const std::filesystem::path& inputs, int threads) {
  auto answer = request("inputs " + inputs.string() + " " + std::to_string(threads));
  if (!answer) return answer.error();
  return {};
}

Result<void> EagerWorker::writeOutputs(const std::filesystem::path& stem) {
  auto answer = request("outputs " + stem.string());
  if (!answer) return answer.error();
  return {};
}

Result<std::vector<double>> EagerWorker::time(int calls) {
  auto line = request("time " + std::to_string(calls));
  if (!line) return line.error();
  std::vector<double> times;
  std::istringstream words(*line);
  for (double value = 0; words >> value;) times.push_back(value);
  if (static_cast<int>(times.size()) != calls) {
    return makeError(ErrorCode::kUnsupported, spec_.name + " answered: " + *line);
  }
  return times;
}

}  // namespace torchscope::compiler
