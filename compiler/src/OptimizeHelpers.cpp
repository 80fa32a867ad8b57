#include "OptimizeHelpers.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "torchscope/compiler/Process.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;

std::string helperPythonPath(const OptimizeOptions& options) {
  const char* existing = std::getenv("PYTHONPATH");
  return options.compiler_python_dir + (existing && *existing ? std::string(":") + existing : "");
}

std::string lastHelperLine(const std::string& text) {
  std::string line;
  std::istringstream lines(text);
  for (std::string next; std::getline(lines, next);) {
    if (next.find_first_not_of(" \t\r") != std::string::npos) line = next;
  }
  return line;
}

struct HelperRun {
  int exit_code = 0;
  bool timed_out = false;
  std::string stdout_text;
  std::string stderr_line;  // the helper's last line on stderr: its one-line reason
};

Result<HelperRun> runHelper(const OptimizeOptions& options, const std::vector<std::string>& arguments,
                            const fs::path& scratch, std::chrono::seconds timeout) {
  ProcessSpec spec;
  spec.argv = {options.python, "-m"};
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  spec.environment["PYTHONPATH"] = helperPythonPath(options);
  spec.environment["PYTHONWARNINGS"] = "ignore";
  spec.stdout_path = (scratch / "helper.out").string();
  spec.stderr_path = (scratch / "helper.err").string();
  spec.timeout = timeout;
  auto result = runProcess(spec);
  if (!result) return result.error();
  HelperRun run{result->exit_code, result->timed_out, readTextFile(spec.stdout_path),
                lastHelperLine(readTextFile(spec.stderr_path))};
  std::error_code ignored;
  fs::remove(spec.stdout_path, ignored);
  fs::remove(spec.stderr_path, ignored);
  return run;
}

}  // namespace

Result<std::string> describeModel(const OptimizeOptions& options, const fs::path& scratch) {
  auto run = runHelper(options, {"torchscope_compiler.aoti_program", "describe", options.model_path}, scratch,
                       std::chrono::seconds(60));
  if (!run) return run.error();
  const auto out = nlohmann::json::parse(run->stdout_text, nullptr, false);
  if (run->exit_code != 0 || !out.is_object() || !out.contains("kind")) {
    return makeError(ErrorCode::kUnsupported,
                     "cannot run " + options.python + " -m torchscope_compiler.aoti_program: " + run->stderr_line);
  }
  return out["kind"].get<std::string>();
}

Result<nlohmann::json> prepareProgram(const OptimizeOptions& options, const fs::path& scratch) {
  std::vector<std::string> arguments = {"torchscope_compiler.aoti_program", "prepare", options.model_path,
                                        scratch.string(), std::to_string(options.seed)};
  for (const auto& shape : options.input_shapes) {
    std::string text;
    for (const auto size : shape) text += (text.empty() ? "" : "x") + std::to_string(size);
    arguments.push_back(text);
  }
  auto run = runHelper(options, arguments, scratch, std::chrono::seconds(600));
  if (!run) return run.error();
  if (run->exit_code != 0) {
    return makeError(run->exit_code == 2 ? ErrorCode::kInvalidArgument : ErrorCode::kUnsupported,
                     run->timed_out ? "loading the program took over 600 s" : run->stderr_line);
  }
  auto out = nlohmann::json::parse(run->stdout_text, nullptr, false);
  if (!out.is_object())
    return makeError(ErrorCode::kUnsupported, "the program's description is no JSON: " + run->stdout_text);
  return out;
}

CompiledVariant compileVariant(const OptimizeOptions& options, const std::string& variant, const fs::path& inputs) {
  CompiledVariant compiled;
  auto run = runHelper(
      options, {"torchscope_compiler.aoti_variants", options.model_path, variant, options.workspace, inputs.string()},
      inputs.parent_path(), std::chrono::seconds(options.compile_timeout_s));
  if (!run) {
    compiled.reason = run.error().message;
    return compiled;
  }
  if (run->timed_out) {
    compiled.reason = "the compile took over " + std::to_string(options.compile_timeout_s) + " s (--compile-timeout)";
    return compiled;
  }
  const auto out = nlohmann::json::parse(lastHelperLine(run->stdout_text), nullptr, false);
  if (!out.is_object()) {
    compiled.reason = "the compile stopped (exit " + std::to_string(run->exit_code) + "): " + run->stderr_line;
    return compiled;
  }
  compiled.ok = out.value("ok", false);
  compiled.reason = out.value("reason", "");
  compiled.package = out.value("package", "");
  compiled.compile_s = out.value("compile_s", 0.0);
  compiled.bytes = out.value("bytes", std::int64_t{0});
  compiled.cached = out.value("cached", false);
  return compiled;
}

Result<ExportedModule> exportJob(const OptimizeOptions& options, const std::vector<std::string>& job,
                                 const std::string& program) {
  // python [-u|-W x|-X x ...] script.py|-m module ARGS: the interpreter's own options stay the interpreter's.
  std::size_t first = 1;
  while (first < job.size() && job[first].size() > 1 && job[first][0] == '-' && job[first] != "-m") {
    first += (job[first] == "-W" || job[first] == "-X") ? 2 : 1;
  }
  const bool python = !job.empty() && fs::path(job[0]).filename().string().rfind("python", 0) == 0;
  if (!python || first >= job.size()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--export needs a python job after --, e.g. -- python infer.py (or -- python -m package.module)");
  }
  const fs::path info = program + ".info-" + std::to_string(getpid()) + ".json";
  ProcessSpec spec;
  spec.argv = {job[0]};
  spec.argv.insert(spec.argv.end(), job.begin() + 1, job.begin() + static_cast<std::ptrdiff_t>(first));
  spec.argv.insert(spec.argv.end(), {"-m", "torchscope_compiler.aoti_capture", program, info.string(), "--"});
  spec.argv.insert(spec.argv.end(), job.begin() + static_cast<std::ptrdiff_t>(first), job.end());
  spec.environment["PYTHONPATH"] = helperPythonPath(options);
  // The job's output goes to files and then to our stderr (the report keeps standard output): opening
  // /dev/stderr anew would truncate a file the caller sent stderr to.
  const fs::path job_out = program + ".out-" + std::to_string(getpid()) + ".txt";
  const fs::path job_err = program + ".err-" + std::to_string(getpid()) + ".txt";
  spec.stdout_path = job_out.string();
  spec.stderr_path = job_err.string();
  auto run = runProcess(spec);
  std::cerr << readTextFile(job_out.string()) << readTextFile(job_err.string()) << std::flush;
  const auto text = readTextFile(info.string());
  std::error_code ignored;
  for (const auto& made : {info, job_out, job_err}) fs::remove(made, ignored);
  if (!run) return run.error();
  const auto out = nlohmann::json::parse(text, nullptr, false);
  if (!out.is_object()) {
    return makeError(ErrorCode::kUnsupported, "the job stopped before its module could be exported (exit " +
                                                  std::to_string(run->exit_code) + ")");
  }
  if (!out.value("ok", false)) return makeError(ErrorCode::kInvalidArgument, out.value("reason", "the export failed"));
  return ExportedModule{out.value("module", ""), out.value("called_at", ""), out.value("dynamic_batch", false)};
}

BaselineWorker::~BaselineWorker() {
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
  if (!stderr_path_.empty()) std::remove(stderr_path_.c_str());
}

Result<void> BaselineWorker::start(const OptimizeOptions& options, const fs::path& inputs, int threads) {
  signal(SIGPIPE, SIG_IGN);  // a worker that died is told by write(), not by a signal
  int to_child[2];
  int from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) {
    return makeError(ErrorCode::kUnsupported, "cannot make pipes for the baseline worker");
  }
  stderr_path_ = (inputs.parent_path() / "baseline.err").string();
  const std::string python_path = helperPythonPath(options);
  const std::vector<std::string> argv = {
      options.python,         "-m", "torchscope_compiler.aoti_baseline", options.model_path, inputs.string(),
      std::to_string(threads)};
  pid_ = fork();
  if (pid_ < 0) return makeError(ErrorCode::kUnsupported, "cannot start the baseline worker");
  if (pid_ == 0) {
    dup2(to_child[0], STDIN_FILENO);
    dup2(from_child[1], STDOUT_FILENO);
    const int err = open(stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, STDERR_FILENO);
    setenv("PYTHONPATH", python_path.c_str(), 1);
    setenv("PYTHONWARNINGS", "ignore", 1);
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  to_child_ = to_child[1];
  from_child_ = from_child[0];
  auto ready = readLine();
  if (!ready || *ready != "ready") {
    return makeError(ErrorCode::kUnsupported,
                     "the eager baseline did not start: " + lastHelperLine(readTextFile(stderr_path_)));
  }
  return {};
}

Result<std::string> BaselineWorker::readLine() {
  for (;;) {
    const auto newline = buffered_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffered_.substr(0, newline);
      buffered_.erase(0, newline + 1);
      return line;
    }
    pollfd ready{from_child_, POLLIN, 0};
    if (poll(&ready, 1, 600000) <= 0) return makeError(ErrorCode::kUnsupported, "the eager baseline stopped answering");
    char chunk[4096];
    const ssize_t got = read(from_child_, chunk, sizeof chunk);
    if (got <= 0)
      return makeError(ErrorCode::kUnsupported,
                       "the eager baseline stopped: " + lastHelperLine(readTextFile(stderr_path_)));
    buffered_.append(chunk, static_cast<std::size_t>(got));
  }
}

Result<std::vector<double>> BaselineWorker::time(int calls) {
  const std::string command = "time " + std::to_string(calls) + "\n";
  if (write(to_child_, command.data(), command.size()) != static_cast<ssize_t>(command.size())) {
    return makeError(ErrorCode::kUnsupported,
                     "the eager baseline stopped: " + lastHelperLine(readTextFile(stderr_path_)));
  }
  auto line = readLine();
  if (!line) return line.error();
  std::vector<double> times;
  std::istringstream words(*line);
  for (double value = 0; words >> value;) times.push_back(value);
  if (static_cast<int>(times.size()) != calls)
    return makeError(ErrorCode::kUnsupported, "the eager baseline answered: " + *line);
  return times;
}

}  // namespace torchscope::compiler
