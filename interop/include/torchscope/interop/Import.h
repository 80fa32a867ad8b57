// `torchscope import`: TORCH_TRACE logs and Kineto traces into a new store.
//
// Error contract: importToStore() fails with kNotFound for a missing path, kInvalidArgument for
// a file that is neither format (or a directory with nothing to import), that is not a regular
// file, that is past a limit below, or a gzip file cut short; kInvalidArgument too for an output
// that is one of the inputs or not a regular file (refused before anything is read or written);
// kIo when the store cannot be written. The store is written under a temporary name and renamed
// into place once complete, so a failed import leaves the output as it was. Malformed lines inside
// a recognised file are skipped, counted, written as store::Diagnostic rows and reported in
// ImportReport; they never fail the import.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torchscope/base/Result.h"
#include "torchscope/interop/Trace.h"

namespace torchscope::interop {

// Limits on one input file (docs/interop.md, *Limits*); past them it is refused. A TORCH_TRACE log is held whole
// in memory while it is parsed; a Kineto trace is read as a stream.
inline constexpr std::uint64_t kMaxTorchTraceBytes = std::uint64_t{512} << 20;  // decompressed
inline constexpr std::uint64_t kMaxKinetoBytes = std::uint64_t{64} << 30;       // decompressed
inline constexpr std::size_t kMaxStringBytes = std::size_t{16} << 20;           // one JSON string of a Kineto trace
// Levels of nesting a Kineto trace may have at all; values deeper than base::kMaxJsonDepth (256) are cut from
// their event, the event kept and the cut counted.
inline constexpr std::size_t kMaxNestingRead = 4096;

struct ImportedFile {
  std::string path;
  InputFormat format = InputFormat::kUnknown;
};

struct ImportReport {
  std::vector<ImportedFile> files;
  std::int64_t records = 0;    // rows written, all tables
  std::int64_t malformed = 0;  // lines/events skipped
  std::vector<SkippedInput> skipped;
  std::vector<std::string> notes;  // directory entries ignored, time-base assumptions
};

// Reads a file whole, gunzipping it when it starts with the gzip magic bytes; refused past kMaxTorchTraceBytes.
[[nodiscard]] Result<std::string> readInputFile(const std::string& path);

// Expands directories (their *.log, *.json and *.gz files, sorted) and checks every file's format.
[[nodiscard]] Result<std::vector<ImportedFile>> resolveInputs(const std::vector<std::string>& paths,
                                                              std::vector<std::string>& notes);

// Parses every input into one trace (files of both formats may be mixed: all times are wall-clock ns).
[[nodiscard]] Result<ImportedTrace> parseInputs(const std::vector<ImportedFile>& files);

[[nodiscard]] Result<ImportReport> importToStore(const std::vector<std::string>& paths, const std::string& store_path,
                                                 const std::string& command_line = "");

// One store per input file (per rank) in `folder` (created), as the collector writes a distributed run: the
// stores are named `run.rank<r>.<n>.db` with the rank the file gives (its processes' rank, else `rank_<r>`
// in its name), or `run.<n>.db` without one, so that advise/export read the folder like a recorded run folder.
[[nodiscard]] Result<ImportReport> importToRunFolder(const std::vector<std::string>& paths, const std::string& folder,
                                                     const std::string& command_line = "");

// One line for stderr: what was imported and what was skipped.
[[nodiscard]] std::string summarize(const ImportReport& report);

}  // namespace torchscope::interop
