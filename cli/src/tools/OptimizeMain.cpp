// torchscope-optimize MODEL [--input SHAPE...]: measures inference variants of an exported program, an AOTInductor
// package or a TorchScript model in process (libtorch); `torchscope optimize` starts it with the same arguments.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "Commands.h"
#include "OptimizeArguments.h"
#include "torchscope/base/JsonText.h"

namespace torchscope::cli {
namespace {

std::string defaultWorkspace() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::filesystem::path root = cache && *cache ? cache : std::filesystem::path(home ? home : "/tmp") / ".cache";
  return (root / "torchscope" / "optimize").string();
}

// The program --export keeps: --program, else the script's (or module's) name with .pt2 in the current folder.
std::filesystem::path keptProgram(const OptimizeArguments& arguments) {
  namespace fs = std::filesystem;
  if (!arguments.program.empty()) return fs::absolute(arguments.program);
  std::string name = "program";
  for (std::size_t i = 1; i < arguments.words.size(); ++i) {
    if (arguments.words[i] == "-m" && i + 1 < arguments.words.size()) {
      name = arguments.words[i + 1].substr(arguments.words[i + 1].rfind('.') + 1);
      break;
    }
    if (arguments.words[i].empty() || arguments.words[i][0] != '-') {
      name = fs::path(arguments.words[i]).stem().string();
      break;
    }
  }
  return fs::absolute(name + ".pt2");
}

void runOptimizeCommand(OptimizeArguments& arguments) {
  namespace tc = torchscope::compiler;
  if (arguments.format != "text" && arguments.format != "json") {
    fail(kExitUsage, "unknown --format '" + arguments.format + "' (text, json)");
  }
  for (const auto& text : arguments.inputs) {
    auto shape = tc::parseShape(text);
    if (!shape) fail(kExitUsage, shape.error().message);
    arguments.options.input_shapes.push_back(*shape);
  }
  arguments.options.python = installation().python;
  arguments.options.compiler_python_dir = installation().compiler_python_dir;
  arguments.options.workspace = arguments.workspace.empty() ? defaultWorkspace() : arguments.workspace;
  const auto exitCode = [](const torchscope::Error& error) {
    return error.code == torchscope::ErrorCode::kInvalidArgument ? kExitUsage : kExitFailure;
  };
  const auto measure = [&arguments]() -> torchscope::Result<tc::OptimizeReport> {
    if (arguments.export_job) {
      const auto program = keptProgram(arguments);
      if (std::filesystem::exists(program)) {
        fail(kExitUsage,
             "'" + program.string() + "' exists: name another file for the exported program with --program");
      }
      return tc::runExportOptimize(arguments.options, arguments.words, program.string());
    }
    if (arguments.words.size() != 1)
      fail(kExitUsage, "optimize takes one model file (or --export -- python job.py ...)");
    if (!std::filesystem::is_regular_file(arguments.words[0])) {
      fail(kExitUsage, "no such model file: '" + arguments.words[0] + "'");
    }
    arguments.options.model_path = std::filesystem::absolute(arguments.words[0]).string();
    return tc::runProgramOptimize(arguments.options);
  };
  auto report = measure();
  if (!report) fail(exitCode(report.error()), report.error().message);
  std::cout << (arguments.format == "json" ? torchscope::base::dumpJson(tc::optimizeJson(*report), 2) + "\n"
                                           : tc::renderOptimizeText(*report));
}

}  // namespace
}  // namespace torchscope::cli

int main(int argc, char** argv) {
  using namespace torchscope::cli;
  CLI::App app{kOptimizeDescription, "torchscope optimize"};
  OptimizeArguments arguments;
  declareOptimizeOptions(app, arguments);
  app.callback([&arguments] { runOptimizeCommand(arguments); });
  return runCommandLine(app, argc, argv);
}
