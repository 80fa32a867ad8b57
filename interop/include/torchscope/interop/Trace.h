// The in-memory result of parsing one or more foreign trace files, before it is written to a
// store. Parsers fill an ImportedTrace; importToStore() (Import.h) writes it out. Keeping the
// parsers free of I/O and SQLite lets tests and fuzz targets drive them with plain bytes.
//
// Error contract: the parse functions never throw and never crash on any input. A malformed
// line or event is skipped and counted in ImportedTrace::malformed; only input that is not the
// format at all fails, with kInvalidArgument.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "torchscope/base/Result.h"
#include "torchscope/store/Records.h"

namespace torchscope::interop {

enum class InputFormat { kTorchTrace, kKineto, kUnknown };

[[nodiscard]] std::string_view formatName(InputFormat format);

// What a file holds, judged from its first bytes (already decompressed).
[[nodiscard]] InputFormat sniffFormat(std::string_view text);

// Malformed input one parser skipped, grouped by what was wrong.
struct SkippedInput {
  std::string file;
  std::string what;       // "line", "payload", "event"
  std::int64_t count = 0;
  std::string first;      // where the first one was and why, for the summary
};

struct ImportedTrace {
  store::RunInfo run;
  std::vector<store::RunAttribute> attributes;
  std::vector<store::Process> processes;
  std::vector<store::Thread> threads;
  std::vector<store::Device> devices;
  std::vector<store::ApiCall> api_calls;
  std::vector<store::Kernel> kernels;
  std::vector<store::Memcpy> memcpys;
  std::vector<store::Memset> memsets;
  std::vector<store::Sync> syncs;
  std::vector<store::CpuOp> cpu_ops;
  std::vector<store::Compile> compiles;
  std::vector<store::GraphBreak> graph_breaks;
  std::vector<store::Recompile> recompiles;
  std::vector<store::Step> steps;
  std::vector<store::MemorySample> memory_samples;
  std::vector<store::MemoryEvent> memory_events;
  std::vector<store::Diagnostic> diagnostics;
  std::vector<SkippedInput> skipped;

  [[nodiscard]] std::int64_t malformed() const;
  // Earliest start and latest end over every timed record; {0, -1} when there is none.
  [[nodiscard]] std::pair<base::Nanos, base::Nanos> span() const;
};

// One TORCH_TRACE log (glog prefix + one JSON object per line, tab-prefixed payload lines).
// `name` labels diagnostics; `rank` comes from the file name when the log does not say;
// `fallback_year` is used only when no event in the log carries an absolute timestamp.
struct TorchTraceSource {
  std::string name;
  std::int64_t rank = -1;
  int fallback_year = 1970;
};
[[nodiscard]] Result<void> parseTorchTrace(std::string_view text, const TorchTraceSource& source, ImportedTrace& out);

// Past these a Kineto trace keeps what it read: deeper values are cut (left out of their event, which is kept)
// and events past the record limit are skipped, each counted in ImportedTrace::skipped (docs/interop.md, *Limits*).
inline constexpr std::size_t kMaxRecordsPerFile = 50'000'000;

// One PyTorch profiler (Kineto) Chrome-trace JSON document, from bytes or read as a stream (memory then follows
// the records kept, not the file's size).
[[nodiscard]] Result<void> parseKineto(std::string_view text, std::string_view name, ImportedTrace& out);
[[nodiscard]] Result<void> parseKineto(std::istream& input, std::string_view name, ImportedTrace& out);

}  // namespace torchscope::interop
