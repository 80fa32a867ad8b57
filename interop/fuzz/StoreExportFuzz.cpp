// libFuzzer target: arbitrary bytes as the store given to `torchscope export` must never crash the export: the
// store's checks, every table read, JSON columns of any depth and the Chrome trace written (to nowhere).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <streambuf>
#include <string>

#include "torchscope/interop/ChromeExport.h"

namespace {

const std::string& storePath() {
  static const std::string path = [] {
    std::string pattern = "/tmp/torchscope-export-fuzz-XXXXXX";
    const int fd = mkstemp(pattern.data());
    if (fd < 0) std::abort();
    close(fd);
    return pattern;
  }();
  return path;
}

// Swallows the trace: the target checks that writing it ends, not what it says.
class NullBuffer final : public std::streambuf {
 protected:
  int_type overflow(int_type c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize count) override { return count; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = storePath();
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  NullBuffer nowhere;
  std::ostream out(&nowhere);
  (void)torchscope::interop::exportChromeTrace(path, out);
  return 0;
}
