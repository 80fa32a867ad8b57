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

// Paths the commands need at run time, found relative to the torchscope executable: the same layout in the build
// tree, under a `cmake --install` prefix and in a wheel's environment (cmake/TorchscopeInstall.cmake), so a moved
// tree keeps working.
struct Installation {
  std::string executable_dir;       // where `torchscope` is: <prefix>/bin
  std::string collector_library;    // <prefix>/lib/libtorchscope_collector.so, or $TORCHSCOPE_COLLECTOR_LIBRARY
  std::string compiler_python_dir;  // <prefix>/share/torchscope/compiler (torchscope_compiler)
  std::string source_dir;           // <prefix>/share/torchscope, where samples/ is (the demo runs from there)
  std::string python;               // $TORCHSCOPE_PYTHON, else the python3 beside torchscope (a venv), else python3
  std::string build_python;         // in the build tree: the Python it was built with (share/torchscope/build-python)
};
const Installation& installation();

// A command whose body is an executable of its own, installed beside `torchscope`.
struct Tool {
  std::string executable;  // file name in installation().executable_dir, e.g. "torchscope-gui"
  std::string how_to_get;  // what to build when it is missing
  std::string library_dir;  // put first on LD_LIBRARY_PATH for the tool (libtorch's folder); empty: none
};

// The arguments `torchscope` was started with, for startTool(); set once by main().
void rememberArguments(int argc, char** argv);

// The tool's path: beside torchscope, else on PATH. Fails (exit code 1, with how to get it) when it is neither.
std::string findTool(const Tool& tool);

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
