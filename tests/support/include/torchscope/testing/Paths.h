// Where the tests find the sources, the shared corpus and the built programs.
#pragma once

#include <filesystem>
#include <string>

namespace torchscope::testing {

std::filesystem::path sourcePath(const std::string& relative);  // under the source tree
std::filesystem::path corpusPath(const std::string& relative);  // under tests/corpus
std::filesystem::path torchscopeExecutable();
std::filesystem::path collectorLibrary();
// The 1-based line of `file` that carries the comment `# MARK:<tag>`; -1 when none does.
int markedLine(const std::filesystem::path& file, const std::string& tag);

}  // namespace torchscope::testing
