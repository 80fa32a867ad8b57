#include "torchscope/testing/Paths.h"

#include <fstream>

namespace torchscope::testing {

namespace fs = std::filesystem;

fs::path sourcePath(const std::string& relative) { return fs::path(TORCHSCOPE_SOURCE_DIR) / relative; }

fs::path corpusPath(const std::string& relative) { return fs::path(TORCHSCOPE_CORPUS_DIR) / relative; }

fs::path torchscopeExecutable() { return fs::path(TORCHSCOPE_BINARY_DIR) / "bin" / "torchscope"; }

fs::path collectorLibrary() { return fs::path(TORCHSCOPE_BINARY_DIR) / "lib" / "libtorchscope_collector.so"; }

int markedLine(const fs::path& file, const std::string& tag) {
  std::ifstream in(file);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find("# MARK:" + tag) != std::string::npos) return number;
  }
  return -1;
}

}  // namespace torchscope::testing
