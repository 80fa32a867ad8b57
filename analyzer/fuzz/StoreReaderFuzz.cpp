// libFuzzer target: arbitrary bytes as a store file (corrupt pages, hostile schema, a newer
// schema version, hostile values in a valid file) must never crash what a user's `advise` runs on
// it: open() and every load either succeed or return an error value, and a store that opens is
// analysed (every rule) and its findings rendered in every report format.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>

#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/Records.h"

namespace {

namespace analyzer = torchscope::analyzer;
namespace store = torchscope::store;

// SQLite needs a path; one file per fuzzing process, rewritten for every input.
const std::string& scratchPath() {
  static const std::string path = "/tmp/torchscope-store-fuzz-" + std::to_string(getpid()) + ".db";
  return path;
}

void removeScratch() {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((scratchPath() + suffix).c_str());
}

// Every table a store declares (store::RowRecords), whole and limited.
void loadEvery(const store::Reader& reader) {
  store::LoadOptions limited;
  limited.limit = 64;
  [&]<class... Records>(std::tuple<Records...>*) {
    (((void)reader.load<Records>(), (void)reader.load<Records>(limited)), ...);
  }(static_cast<store::RowRecords*>(nullptr));
}

void analyseAndRender(const store::Reader& reader) {
  analyzer::AnalyzeOptions options;
  options.timeline_buckets = 16;
  auto analysis = analyzer::analyzeStore(reader, options);
  if (!analysis) return;
  for (auto format : {analyzer::Format::kText, analyzer::Format::kJson, analyzer::Format::kMarkdown,
                      analyzer::Format::kSarif, analyzer::Format::kJunit, analyzer::Format::kHtml}) {
    (void)analyzer::render(*analysis, format);
  }
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
        loadEvery(r);
        analyseAndRender(r);
      }
    }
  }
  removeScratch();
  return 0;
}
