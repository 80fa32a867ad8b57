// Every subcommand of `torchscope` registers itself here; each lives in commands/<Name>.cpp.
//
// Contract for all commands: a clear one-line message on stderr and exit code 2 for bad input
// (unknown file, wrong format, bad option value); exit code 1 for a failed operation on good
// input (I/O error, a job that could not start); 0 on success. A command signals its exit code
// by throwing CommandExit from its callback, which main() turns into the process's exit code.
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

// Paths the commands need at run time, found relative to the torchscope executable.
struct Installation {
  std::string executable_dir;   // where `torchscope` is
  std::string collector_library;  // <build or prefix>/lib/libtorchscope_collector.so, or $TORCHSCOPE_COLLECTOR_LIBRARY
  std::string source_dir;       // the source tree (samples, scripts), from the build
  std::string python;           // the Python used for samples and helpers
};
const Installation& installation();

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
