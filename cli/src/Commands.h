// Every subcommand of `torchscope` registers itself here; each lives in commands/<Name>.cpp.
//
// Contract for all commands: a clear one-line message on stderr and exit code 2 for bad input
// (unknown file, wrong format, bad option value); exit code 1 for a failed operation on good
// input (I/O error, a job that could not start); 0 on success. A command signals its exit code
// by throwing CommandExit from its callback, which runCommandLine() turns into the process's exit code.
//
// `gui` and `optimize` need Qt and libtorch: their bodies are the executables torchscope-gui and
// torchscope-optimize (tools/), which the core starts with startTool() so that it loads neither.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace torchscope::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

struct CommandExit {
  int code = kExitOk;
};

// Prints "torchscope: <message>" on stderr and ends the command with `code`.
[[noreturn]] void fail(int code, const std::string& message);

// Parses the command line into `app` and runs the callbacks; returns the process's exit code.
int runCommandLine(CLI::App& app, int argc, char** argv);

// Paths the commands need at run time, found relative to the torchscope executable.
struct Installation {
  std::string executable_dir;   // where `torchscope` is
  std::string collector_library;  // <build or prefix>/lib/libtorchscope_collector.so, or $TORCHSCOPE_COLLECTOR_LIBRARY
  std::string source_dir;       // the source tree (samples, scripts), from the build
  std::string python;           // the Python used for samples and helpers
};
const Installation& installation();

// A command whose body is an executable of its own, installed beside `torchscope`.
struct Tool {
  std::string executable;  // file name in installation().executable_dir, e.g. "torchscope-gui"
  std::string how_to_get;  // what to build when it is missing
};

// The arguments `torchscope` was started with, for startTool(); set once by main().
void rememberArguments(int argc, char** argv);

// Replaces this process with the tool, given the arguments that followed the command's name. Returns only by
// failing: exit code 1 with how to get the tool when it is missing.
[[noreturn]] void startTool(const Tool& tool);

void addRunCommand(CLI::App& app);
void addAdviseCommand(CLI::App& app);
void addFixCommand(CLI::App& app);
void addCompareCommand(CLI::App& app);
void addStatsCommand(CLI::App& app);
void addImportCommand(CLI::App& app);
void addExportCommand(CLI::App& app);
void addGuiCommand(CLI::App& app);
void addDemoCommand(CLI::App& app);
void addOptimizeCommand(CLI::App& app);

}  // namespace torchscope::cli
