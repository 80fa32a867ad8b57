// What the three executables (torchscope, torchscope-gui, torchscope-optimize) share: errors as exit codes,
// the installation's paths, and starting a tool that lives beside `torchscope`.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "Commands.h"

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

int runCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "torchscope: " << e.what() << "\n";
    std::cerr << "Run 'torchscope --help' for the list of commands.\n";
    return kExitUsage;
  } catch (const CommandExit& e) {
    return e.code;
  } catch (const std::exception& e) {
    std::cerr << "torchscope: internal error: " << e.what() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

const Installation& installation() {
  static const Installation paths = [] {
    Installation result;
    char buffer[PATH_MAX] = {};
    const ssize_t length = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
    const std::filesystem::path exe = length > 0 ? std::filesystem::path(std::string(buffer, static_cast<std::size_t>(length)))
                                                 : std::filesystem::current_path() / "torchscope";
    result.executable_dir = exe.parent_path().string();
    const char* library = std::getenv("TORCHSCOPE_COLLECTOR_LIBRARY");
    result.collector_library = library ? library : (exe.parent_path().parent_path() / "lib" / "libtorchscope_collector.so").string();
    result.source_dir = TORCHSCOPE_SOURCE_DIR;
    const char* python = std::getenv("TORCHSCOPE_PYTHON");
    result.python = python ? python : TORCHSCOPE_PYTHON;
    return result;
  }();
  return paths;
}

void rememberArguments(int argc, char** argv) { arguments() = {argc, argv}; }

void startTool(const Tool& tool) {
  const std::string path = installation().executable_dir + "/" + tool.executable;
  // argv[1] is the command's name (main() checks it); the tool gets what follows.
  std::vector<char*> argv{const_cast<char*>(path.c_str())};
  for (int i = 2; i < arguments().argc; ++i) argv.push_back(arguments().argv[i]);
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  execv(path.c_str(), argv.data());
  if (errno == ENOENT) {
    fail(kExitFailure, tool.executable + " is not installed beside this torchscope (looked for " + path + "): " +
                           tool.how_to_get);
  }
  fail(kExitFailure, "cannot start " + path + ": " + std::strerror(errno));
}

}  // namespace torchscope::cli
