#include "Output.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <iostream>

#include "Commands.h"
#include "torchscope/store/Files.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::cli {

int exitCodeFor(const Error& error) {
  return error.code == ErrorCode::kIo || error.code == ErrorCode::kUnsupported ? kExitFailure : kExitUsage;
}

void failWith(const Error& error) { fail(exitCodeFor(error), error.message); }

bool isStandardOutput(const std::string& output) { return output.empty() || output == "-"; }

void checkOutput(const std::string& output, const std::vector<std::string>& inputs) {
  if (isStandardOutput(output)) return;
  if (auto writable = store::checkOutputFile(output, inputs); !writable) failWith(writable.error());
}

void writeOutput(const std::string& output, const std::string& text) {
  if (isStandardOutput(output)) {
    std::cout << text << std::flush;
    return;
  }
  if (auto written = store::replaceFile(output, text); !written) failWith(written.error());
}

namespace {

// Never destroyed: std::cout flushes into it until the process ends.
store::DescriptorBuffer& standardOutput() {
  static auto* buffer = new store::DescriptorBuffer(STDOUT_FILENO);
  return *buffer;
}

}  // namespace

void checkStandardOutput() { std::cout.rdbuf(&standardOutput()); }

int finishStandardOutput(int code) {
  std::cout.flush();
  const int reason = standardOutput().error();
  if (reason == 0) return code;
  // A reader that stopped reading (`| head`) is not an error worth a line, as for other Unix tools.
  if (reason != EPIPE) std::cerr << "torchscope: standard output: cannot write (" << std::strerror(reason) << ")\n";
  return kExitFailure;
}

void noteCompanionStores(const std::string& command, const std::string& input) {
  std::error_code error;
  if (std::filesystem::is_directory(input, error)) return;
  const auto companions = store::companionStores(input);
  if (companions.empty()) return;
  std::string names;
  for (const auto& path : companions)
    names += (names.empty() ? "" : ", ") + std::filesystem::path(path).filename().string();
  std::cerr << "torchscope " << command << ": " << input << " is one of " << companions.size() + 1
            << " stores its job wrote; this reads it alone. The others, beside it: " << names
            << " (give them too, or their folder; `torchscope advise " << input << "` reads them all)\n";
}

}  // namespace torchscope::cli
