#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "Commands.h"

namespace torchscope::cli {

void fail(int code, const std::string& message) {
  std::cerr << "torchscope: " << message << "\n";
  throw CommandExit{code};
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

}  // namespace torchscope::cli

int main(int argc, char** argv) {
  using namespace torchscope::cli;
  CLI::App app{"torchscope: finds why a PyTorch job is slow, fixes it and measures the gain", "torchscope"};
  app.set_version_flag("--version", std::string("torchscope ") + TORCHSCOPE_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);

  addRunCommand(app);
  addAdviseCommand(app);
  addFixCommand(app);
  addCompareCommand(app);
  addStatsCommand(app);
  addImportCommand(app);
  addExportCommand(app);
  addGuiCommand(app);
  addDemoCommand(app);
  addOptimizeCommand(app);

  // CLI11 reports an unknown command as a missing one; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const auto* sub : app.get_subcommands({})) known = known || sub->check_name(argv[1]);
    if (!known) {
      std::cerr << "torchscope: unknown command '" << argv[1] << "'\n";
      std::cerr << "Run 'torchscope --help' for the list of commands.\n";
      return kExitUsage;
    }
  }

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
