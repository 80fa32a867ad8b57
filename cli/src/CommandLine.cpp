// What the three executables (torchscope, torchscope-gui, torchscope-optimize) share: errors as exit codes,
// the installation's paths, and starting a tool that lives beside `torchscope`.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <sstream>
#include <vector>

#include "Commands.h"
#include "Output.h"
#include "torchscope/base/Settings.h"

namespace torchscope::cli {

namespace {

struct Arguments {
  int argc = 0;
  char** argv = nullptr;
};

Arguments& arguments() {
  static Arguments remembered;
  return remembered;
}

}  // namespace

void fail(int code, const std::string& message) {
  std::cerr << "torchscope: " << message << "\n";
  throw CommandExit{code};
}

namespace {

// A standard descriptor the caller closed (`>&-`) is held by /dev/null opened read-only: a file the command opens
// never takes its number (stdout would then write into a store), and what the command prints fails there with
// EBADF, which finishStandardOutput() reports.
void occupyClosedStandardDescriptors() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    const int held = open("/dev/null", O_RDONLY);
    if (held >= 0 && held != fd) {
      dup2(held, fd);
      close(held);
    }
  }
}

}  // namespace

int runCommandLine(CLI::App& app, int argc, char** argv) {
  occupyClosedStandardDescriptors();
  checkStandardOutput();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return finishStandardOutput(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return finishStandardOutput(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return finishStandardOutput(app.exit(e));
  } catch (const CLI::ParseError& e) {
    std::cerr << "torchscope: " << e.what() << "\n";
    std::cerr << "Run 'torchscope --help' for the list of commands.\n";
    return kExitUsage;
  } catch (const CommandExit& e) {
    return finishStandardOutput(e.code);
  } catch (const std::bad_alloc&) {
    std::cerr << "torchscope: not enough memory for this input (free memory, or import fewer or smaller files)\n";
    return kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "torchscope: internal error (please report it): " << e.what() << "\n";
    return kExitFailure;
  }
  return finishStandardOutput(kExitOk);
}

namespace {

bool isExecutable(const std::filesystem::path& path) { return access(path.c_str(), X_OK) == 0; }

}  // namespace

const Installation& installation() {
  static const Installation paths = [] {
    namespace fs = std::filesystem;
    Installation result;
    char buffer[PATH_MAX] = {};
    const ssize_t length = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
    const fs::path exe = length > 0 ? fs::path(std::string(buffer, static_cast<std::size_t>(length)))
                                    : fs::current_path() / "torchscope";
    // <prefix>/bin/torchscope: everything else is under <prefix>.
    const fs::path prefix = exe.parent_path().parent_path();
    const fs::path data = prefix / TORCHSCOPE_LAYOUT_DATADIR;
    result.executable_dir = exe.parent_path().string();
    const char* library = std::getenv(std::string(base::settings::kCollectorLibrary.name).c_str());
    result.collector_library =
        library ? library : (prefix / TORCHSCOPE_LAYOUT_LIBDIR / "libtorchscope_collector.so").string();
    result.compiler_python_dir = (data / "compiler").string();
    result.source_dir = data.string();
    // Installed by pip into a virtual environment, torchscope sits beside that environment's Python.
    const char* python = std::getenv(std::string(base::settings::kPython.name).c_str());
    const fs::path beside = exe.parent_path() / "python3";
    result.python = python ? python : isExecutable(beside) ? beside.string() : "python3";
    std::ifstream build_python(data / "build-python");
    std::getline(build_python, result.build_python);
    return result;
  }();
  return paths;
}

void rememberArguments(int argc, char** argv) { arguments() = {argc, argv}; }

std::string findTool(const Tool& tool) {
  // Beside torchscope first (one build, one install); else on PATH: a wheel's torchscope finds a GUI built and
  // installed from source on the system.
  const std::string beside = installation().executable_dir + "/" + tool.executable;
  if (isExecutable(beside)) return beside;
  const char* search = std::getenv("PATH");
  std::istringstream folders(search != nullptr ? search : "");
  for (std::string folder; std::getline(folders, folder, ':');) {
    const std::filesystem::path candidate = std::filesystem::path(folder.empty() ? "." : folder) / tool.executable;
    if (isExecutable(candidate)) return candidate.string();
  }
  fail(kExitFailure, tool.executable + " is not installed beside this torchscope (" + installation().executable_dir +
                         ") nor on PATH: " + tool.how_to_get);
}

void startTool(const Tool& tool) {
  const std::string path = findTool(tool);
  // argv[1] is the command's name (main() checks it); the tool gets what follows.
  std::vector<char*> argv{const_cast<char*>(path.c_str())};
  for (int i = 2; i < arguments().argc; ++i) argv.push_back(arguments().argv[i]);
  argv.push_back(nullptr);
  if (!tool.library_dir.empty()) {
    const char* current = std::getenv("LD_LIBRARY_PATH");
    const std::string combined = current != nullptr && *current != '\0' ? tool.library_dir + ":" + current : tool.library_dir;
    setenv("LD_LIBRARY_PATH", combined.c_str(), 1);
  }
  std::cout.flush();
  std::cerr.flush();
  execv(path.c_str(), argv.data());
  fail(kExitFailure, "cannot start " + path + ": " + std::strerror(errno));
}

}  // namespace torchscope::cli
