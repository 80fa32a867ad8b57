// libFuzzer target: arbitrary bytes as a file given to `torchscope import` (plain or gzip, either format) must
// never crash the reading path the command takes: the input checks, zlib, the limits, the format sniffing and
// the streamed Kineto parser or the whole-file TORCH_TRACE parser.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "torchscope/interop/Import.h"

namespace {

const std::string& inputPath() {
  static const std::string path = [] {
    std::string pattern = "/tmp/torchscope-input-fuzz-XXXXXX";
    const int fd = mkstemp(pattern.data());
    if (fd < 0) std::abort();
    close(fd);
    return pattern;
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = inputPath();
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  std::vector<std::string> notes;
  auto files = torchscope::interop::resolveInputs({path}, notes);
  if (files) (void)torchscope::interop::parseInputs(*files);
  return 0;
}
