#include "OptimizeHelpers.h"

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "torchscope/compiler/Process.h"

namespace torchscope::compiler {

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

namespace {

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

Result<ExportedModule> startJobExport(const OptimizeOptions& options, const std::vector<std::string>& job,
                                      const std::string& program, const fs::path& scratch, EagerWorker& worker) {
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
  const fs::path info = scratch / "export.json";
  EagerWorkerSpec spec;
  spec.argv = {job[0]};
  spec.argv.insert(spec.argv.end(), job.begin() + 1, job.begin() + static_cast<std::ptrdiff_t>(first));
  spec.argv.insert(spec.argv.end(), {"-m", "torchscope_compiler.aoti_capture", program, info.string(), "--"});
  spec.argv.insert(spec.argv.end(), job.begin() + static_cast<std::ptrdiff_t>(first), job.end());
  spec.python_path = helperPythonPath(options);
  spec.stderr_path = scratch / "job.err";  // the job's output, both streams (the report keeps standard output)
  spec.name = "the job's module";
  spec.lend_stdin = true;
  if (auto started = worker.start(std::move(spec)); !started) return started.error();
  const auto ready = worker.awaitReady();  // the whole job runs first
  std::cerr << readTextFile((scratch / "job.err").string()) << std::flush;
  const auto out = nlohmann::json::parse(readTextFile(info.string()), nullptr, false);
  if (!out.is_object()) {
    return makeError(ErrorCode::kUnsupported, "the job stopped before its module could be exported (exit " +
                                                  std::to_string(worker.exitCode()) + ")");
  }
  if (!out.value("ok", false)) return makeError(ErrorCode::kInvalidArgument, out.value("reason", "the export failed"));
  if (!ready) return ready.error();
  return ExportedModule{out.value("module", ""), out.value("defined_at", ""), out.value("called_at", ""),
                        out.value("dynamic_batch", false)};
}

Result<void> startBaseline(const OptimizeOptions& options, const fs::path& scratch, EagerWorker& worker) {
  EagerWorkerSpec spec;
  spec.argv = {options.python, "-m", "torchscope_compiler.aoti_baseline", options.model_path};
  spec.python_path = helperPythonPath(options);
  spec.stderr_path = scratch / "baseline.err";
  spec.name = "the eager baseline";
  if (auto started = worker.start(std::move(spec)); !started) return started.error();
  return worker.awaitReady();
}

}  // namespace torchscope::compiler
