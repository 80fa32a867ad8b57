// libFuzzer target: arbitrary bytes as a store file (corrupt pages, hostile schema, a newer
// schema version) must never crash the reader: open() and every load either succeed or return
// an error value.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "torchscope/store/Reader.h"

namespace {

namespace store = torchscope::store;

// SQLite needs a path; one file per fuzzing process, rewritten for every input.
const std::string& scratchPath() {
  static const std::string path = "/tmp/torchscope-store-fuzz-" + std::to_string(getpid()) + ".db";
  return path;
}

void removeScratch() {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((scratchPath() + suffix).c_str());
}

template <class... Records>
void loadEvery(const store::Reader& reader) {
  store::LoadOptions limited;
  limited.limit = 64;
  (((void)reader.load<Records>(), (void)reader.load<Records>(limited)), ...);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  removeScratch();
  if (std::FILE* file = std::fopen(scratchPath().c_str(), "wb")) {
    const bool written = size == 0 || std::fwrite(data, 1, size, file) == size;
    std::fclose(file);
    if (written) {
      if (auto reader = store::Reader::open(scratchPath())) {
        const store::Reader& r = **reader;
        (void)r.run();
        (void)r.counts();
        (void)r.timeSpan();
        loadEvery<store::RunAttribute, store::Process, store::Thread, store::Device, store::ApiCall, store::Kernel,
                  store::Memcpy, store::Memset, store::Sync, store::NvtxEvent, store::CpuOp, store::Compile,
                  store::GraphBreak, store::Recompile, store::Step, store::Finding, store::FixExperiment,
                  store::Diagnostic>(r);
      }
    }
  }
  removeScratch();
  return 0;
}
