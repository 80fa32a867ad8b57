#include "torchscope/interop/Import.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <istream>
#include <optional>
#include <set>
#include <streambuf>

#include "TraceOps.h"
#include "WallClock.h"
#include "torchscope/store/Files.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/Writer.h"

namespace torchscope::interop {

namespace fs = std::filesystem;

namespace {

// A file read through zlib, which passes plain files through and gunzips gzip files, as a stream that
// ends early with a reason: the file is larger than `limit` once decompressed, a JSON string in it is
// longer than kMaxStringBytes (when `json` is set), the gzip stream is cut short or damaged.
class InputStream final : public std::streambuf {
 public:
  InputStream(const std::string& path, std::uint64_t limit, bool json) : path_(path), limit_(limit), json_(json) {
    file_ = gzopen(path.c_str(), "rb");
    if (file_ == nullptr) {
      failure_ = makeError(ErrorCode::kIo, fmt::format("{}: cannot read ({})", path, std::strerror(errno)));
    } else {
      gzbuffer(file_, 1 << 17);
    }
  }
  ~InputStream() override {
    if (file_ != nullptr) gzclose(file_);
  }
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  // Why the stream ended before the file did; empty when it read the whole file.
  [[nodiscard]] const std::optional<Error>& failure() const { return failure_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    std::size_t kept = 0;
    while (kept == 0) {  // a chunk of JSON whitespace may leave nothing to hand over: read on
      if (file_ == nullptr || failure_) return traits_type::eof();
      const int got = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
      int code = Z_OK;
      const char* why = gzerror(file_, &code);
      if (got < 0 || (code != Z_OK && code != Z_BUF_ERROR)) {
        failure_ = makeError(ErrorCode::kInvalidArgument, fmt::format("{}: unreadable ({})", path_, why));
        return traits_type::eof();
      }
      if (got == 0) {
        // zlib reports a gzip stream cut short only as Z_BUF_ERROR at its end: an error, not an end of file.
        if (code == Z_BUF_ERROR) {
          failure_ = makeError(ErrorCode::kInvalidArgument,
                               fmt::format("{}: a truncated gzip file (it ends before its compressed data does)", path_));
        }
        return traits_type::eof();
      }
      read_ += static_cast<std::uint64_t>(got);
      if (read_ > limit_) {
        failure_ = makeError(ErrorCode::kInvalidArgument,
                             fmt::format("{}: larger than {} MiB once decompressed (docs/interop.md, Limits)", path_,
                                         limit_ >> 20));
        return traits_type::eof();
      }
      kept = static_cast<std::size_t>(got);
      if (json_) {
        const char* past = boundJson(kept);
        if (past != nullptr) {
          failure_ = makeError(ErrorCode::kInvalidArgument, fmt::format("{}: {} (docs/interop.md, Limits)", path_, past));
          return traits_type::eof();
        }
      }
    }
    setg(buffer_.data(), buffer_.data(), buffer_.data() + kept);
    return traits_type::to_int_type(*gptr());
  }

 private:
  // Follows the strings, tokens and brackets of the JSON text in the buffer's first `size` bytes, across reads,
  // and keeps one character of each run of whitespace between tokens (nlohmann::json's lexer keeps every byte it
  // skips until the next token: a gigabyte of spaces cost two). `size` becomes what is left; returns what the text
  // is past, or null. The parser keeps a few bytes per level of nesting and the whole of each token, so both are
  // bounded before it reads them.
  const char* boundJson(std::size_t& size) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size; ++i) {
      const char c = buffer_[i];
      if (in_string_) {
        if (escaped_) {
          escaped_ = false;
        } else if (c == '\\') {
          escaped_ = true;
        } else if (c == '"') {
          in_string_ = false;
        }
        if (++token_bytes_ > kMaxStringBytes) return "a JSON string longer than 16 MiB";
      } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
        token_bytes_ = 0;
        if (after_space_) continue;
        after_space_ = true;
        buffer_[kept++] = c;
        continue;
      } else if (c == '"') {
        in_string_ = true;
        token_bytes_ = 0;
      } else if (c == '[' || c == '{') {
        token_bytes_ = 0;
        if (++depth_ > kMaxNestingRead) return "JSON nested more than 4096 levels deep";
      } else if (c == ']' || c == '}' || c == ',' || c == ':') {
        token_bytes_ = 0;
        if ((c == ']' || c == '}') && depth_ > 0) --depth_;
      } else if (++token_bytes_ > kMaxStringBytes) {
        return "a JSON number or literal longer than 16 MiB";
      }
      after_space_ = false;
      buffer_[kept++] = c;
    }
    size = kept;
    return nullptr;
  }

  std::string path_;
  std::uint64_t limit_;
  bool json_;
  gzFile file_ = nullptr;
  std::array<char, 1 << 17> buffer_{};
  std::uint64_t read_ = 0;
  std::optional<Error> failure_;
  bool in_string_ = false;
  bool escaped_ = false;
  bool after_space_ = false;
  std::size_t token_bytes_ = 0;
  std::size_t depth_ = 0;
};

// Reads up to `limit` bytes; fails when the file holds more than `limit` and `whole` is set.
Result<std::string> readUpTo(const std::string& path, std::uint64_t limit, bool whole) {
  InputStream input(path, whole ? limit : UINT64_MAX, false);
  std::string text;
  std::array<char, 1 << 16> buffer{};
  while (text.size() < limit) {
    const auto want = static_cast<std::streamsize>(std::min<std::uint64_t>(buffer.size(), limit - text.size()));
    const std::streamsize got = input.sgetn(buffer.data(), want);
    if (got <= 0) break;
    text.append(buffer.data(), static_cast<std::size_t>(got));
  }
  if (whole && text.size() >= limit && input.sgetc() != std::streambuf::traits_type::eof()) {
    return makeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: larger than {} MiB once decompressed (docs/interop.md, Limits)", path, limit >> 20));
  }
  if (input.failure()) return *input.failure();
  return text;
}

int yearOfModification(const std::string& path) {
  struct stat info{};
  if (stat(path.c_str(), &info) != 0) return 1970;
  return static_cast<int>(yearOf(static_cast<std::int64_t>(info.st_mtime) * 1'000'000'000));
}

// dedicated_log_torch_trace_rank_3_abc.log -> 3
std::int64_t rankFromName(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  const auto at = name.find("rank_");
  if (at == std::string::npos) return -1;
  std::int64_t rank = 0;
  std::size_t i = at + 5;
  for (; i < name.size() && i < at + 12 && name[i] >= '0' && name[i] <= '9'; ++i) rank = rank * 10 + (name[i] - '0');
  return i > at + 5 ? rank : -1;
}

bool looksImportable(const fs::path& path) {
  const std::string name = path.filename().string();
  const auto ends = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".log") || ends(".json") || ends(".gz");
}

store::Diagnostic diagnosticFor(const SkippedInput& skipped) {
  return {"import", "warning",
          fmt::format("{}: skipped {} malformed {}{} (first at {})", skipped.file, skipped.count, skipped.what,
                      skipped.count == 1 ? "" : "s", skipped.first),
          skipped.count};
}

// Distinct files may name the same process id (pthread ids, pids reused across hosts).
void keepPidsDistinct(ImportedTrace& trace, std::set<std::int64_t>& used) {
  std::set<std::int64_t> own;
  for (const auto& process : trace.rows<store::Process>()) own.insert(process.pid);
  for (std::int64_t pid : own) {
    if (used.count(pid) == 0) {
      used.insert(pid);
      continue;
    }
    std::int64_t fresh = std::max<std::int64_t>(*used.rbegin(), *own.rbegin()) + 1;
    renamePid(trace, pid, fresh);
    used.insert(fresh);
  }
}

}  // namespace

std::string_view formatName(InputFormat format) {
  switch (format) {
    case InputFormat::kTorchTrace: return "TORCH_TRACE log";
    case InputFormat::kKineto: return "Kineto trace";
    case InputFormat::kUnknown: break;
  }
  return "unknown";
}

InputFormat sniffFormat(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return InputFormat::kUnknown;
  if (text[first] == '{') return InputFormat::kKineto;
  // `V1206 15:18:15.925000 1500233 torch/_dynamo/utils.py:1288] {...}`
  const std::string_view line = text.substr(first, text.find('\n', first) - first);
  const auto digits = [&](std::size_t at, std::size_t count) {
    if (line.size() < at + count) return false;
    return std::all_of(line.begin() + static_cast<std::ptrdiff_t>(at), line.begin() + static_cast<std::ptrdiff_t>(at + count),
                       [](char c) { return c >= '0' && c <= '9'; });
  };
  if (line.size() > 24 && std::strchr("VIWEFCD", line[0]) != nullptr && digits(1, 4) && line[5] == ' ' &&
      line.find("] {") != std::string_view::npos) {
    return InputFormat::kTorchTrace;
  }
  return InputFormat::kUnknown;
}

Result<std::string> readInputFile(const std::string& path) { return readUpTo(path, kMaxTorchTraceBytes, true); }

Result<std::vector<ImportedFile>> resolveInputs(const std::vector<std::string>& paths, std::vector<std::string>& notes) {
  std::vector<ImportedFile> files;
  const auto check = [&](const std::string& path, bool explicit_file) -> Result<void> {
    auto text = readUpTo(path, 1 << 16, false);
    if (!text) return text.error();
    const InputFormat format = sniffFormat(*text);
    if (format != InputFormat::kUnknown) {
      files.push_back({path, format});
    } else if (explicit_file) {
      return makeError(ErrorCode::kInvalidArgument,
                       fmt::format("{}: neither a TORCH_TRACE log nor a PyTorch profiler (Kineto) trace", path));
    } else {
      notes.push_back(fmt::format("{}: skipped, neither a TORCH_TRACE log nor a Kineto trace", path));
    }
    return {};
  };
  for (const auto& path : paths) {
    std::error_code error;
    if (!fs::is_directory(path, error)) {
      if (auto readable = store::checkInputFile(path); !readable) return readable.error();
      if (auto checked = check(path, true); !checked) return checked.error();
      continue;
    }
    std::vector<fs::path> entries;
    for (const auto& entry : fs::directory_iterator(path, error)) {
      if (!entry.is_regular_file(error)) continue;
      if (looksImportable(entry.path())) {
        entries.push_back(entry.path());
      } else {
        notes.push_back(fmt::format("{}: ignored (not .log, .json or .gz)", entry.path().string()));
      }
    }
    if (error) return makeError(ErrorCode::kIo, fmt::format("{}: cannot list the folder ({})", path, error.message()));
    std::sort(entries.begin(), entries.end());
    const std::size_t before = files.size();
    for (const auto& entry : entries) {
      if (auto checked = check(entry.string(), false); !checked) return checked.error();
    }
    if (files.size() == before) {
      return makeError(ErrorCode::kInvalidArgument, fmt::format("{}: no TORCH_TRACE log or Kineto trace in this directory", path));
    }
  }
  if (files.empty()) return makeError(ErrorCode::kInvalidArgument, "nothing to import");
  return files;
}

Result<ImportedTrace> parseInputs(const std::vector<ImportedFile>& files) {
  ImportedTrace merged;
  std::set<std::int64_t> used_pids;
  for (const auto& file : files) {
    ImportedTrace trace;
    const std::string name = fs::path(file.path).filename().string();
    if (file.format == InputFormat::kTorchTrace) {
      auto text = readInputFile(file.path);
      if (!text) return text.error();
      auto parsed = parseTorchTrace(*text, {name, rankFromName(file.path), yearOfModification(file.path)}, trace);
      if (!parsed) return parsed.error();
    } else {
      // Read as a stream: memory follows the records kept, not the file's size.
      InputStream buffer(file.path, kMaxKinetoBytes, true);
      std::istream input(&buffer);
      auto parsed = parseKineto(input, name, trace);
      if (buffer.failure()) return *buffer.failure();
      if (!parsed) return parsed.error();
    }
    keepPidsDistinct(trace, used_pids);
    appendTrace(merged, std::move(trace));
  }
  for (const auto& skipped : merged.skipped) merged.add(diagnosticFor(skipped));
  return merged;
}

Result<ImportReport> importToRunFolder(const std::vector<std::string>& paths, const std::string& folder,
                                       const std::string& command_line) {
  ImportReport report;
  auto files = resolveInputs(paths, report.notes);
  if (!files) return files.error();
  std::error_code error;
  fs::create_directories(folder, error);
  if (!fs::is_directory(folder, error)) {
    return makeError(ErrorCode::kIo, fmt::format("{}: cannot create the folder ({})", folder, error.message()));
  }
  for (std::size_t n = 0; n < files->size(); ++n) {
    const std::string& input = (*files)[n].path;
    const fs::path pending = fs::path(folder) / fmt::format("import.{}.db.tmp", n);
    auto one = importToStore({input}, pending.string(), command_line);
    if (!one) return makeError(one.error().code, one.error().message);
    std::int64_t rank = rankFromName(input);
    {
      auto reader = store::Reader::open(pending.string());
      if (!reader) return reader.error();
      auto done = (*reader)->query("SELECT coalesce(min(rank), -1) FROM processes WHERE rank >= 0",
                                   [&](const store::Row& row) { rank = row.integer(0) >= 0 ? row.integer(0) : rank; });
      if (!done) return done.error();
    }
    const fs::path store = fs::path(folder) / (rank >= 0 ? fmt::format("run.rank{}.{}.db", rank, n) : fmt::format("run.{}.db", n));
    if (auto writable = store::checkOutputFile(store.string(), {input}); !writable) {
      fs::remove(pending, error);
      return writable.error();
    }
    if (auto renamed = store::renameStoreOver(pending.string(), store.string()); !renamed) return renamed.error();
    report.files.insert(report.files.end(), one->files.begin(), one->files.end());
    report.records += one->records;
    report.malformed += one->malformed;
    report.skipped.insert(report.skipped.end(), one->skipped.begin(), one->skipped.end());
    report.notes.insert(report.notes.end(), one->notes.begin(), one->notes.end());
  }
  return report;
}

Result<ImportReport> importToStore(const std::vector<std::string>& paths, const std::string& store_path,
                                   const std::string& command_line) {
  if (auto writable = store::checkOutputFile(store_path, paths); !writable) return writable.error();
  ImportReport report;
  auto files = resolveInputs(paths, report.notes);
  if (!files) return files.error();
  std::vector<std::string> inputs;
  for (const auto& file : *files) inputs.push_back(file.path);
  if (auto writable = store::checkOutputFile(store_path, inputs); !writable) return writable.error();
  report.files = *files;
  auto parsed = parseInputs(report.files);
  if (!parsed) return parsed.error();
  ImportedTrace& trace = *parsed;

  const auto [begin, end] = trace.span();
  trace.run.command_line = command_line;
  trace.run.start_ns = end >= begin ? begin : 0;
  trace.run.start_wall_ns = trace.run.start_ns;  // imported times are wall-clock nanoseconds already
  trace.run.end_ns = end >= begin ? end : -1;
  if (std::any_of(report.files.begin(), report.files.end(), [&](const ImportedFile& f) { return f.format != report.files[0].format; })) {
    trace.run.source = "import:mixed";
  }
  for (const auto& note : report.notes) trace.add(store::Diagnostic{"import", "info", note, 1});

  // The store is built under a temporary name and renamed over `store_path` only once complete: a failed
  // import leaves whatever was there before.
  const std::string pending = store_path + ".torchscope.tmp-" + std::to_string(::getpid());
  const auto discard_pending = [&] {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlink((pending + suffix).c_str());
  };
  auto writer = store::Writer::open(pending);
  if (!writer) {
    discard_pending();
    return makeError(writer.error().code, fmt::format("{}: cannot create the store ({})", store_path, writer.error().message));
  }
  store::Writer& out = **writer;
  out.setRun(trace.run);
  std::int64_t records = 0;
  trace.forEachTable([&](auto& rows) {
    for (auto& row : rows) out.add(std::move(row));
    records += static_cast<std::int64_t>(rows.size());
  });
  const auto closed = out.close(trace.run.end_ns);
  const auto stats = out.stats();
  writer->reset();
  if (!closed || stats.dropped > 0) {
    discard_pending();
    if (!closed) return makeError(closed.error().code, fmt::format("{}: cannot write ({})", store_path, closed.error().message));
    return makeError(ErrorCode::kIo, fmt::format("{}: {} records could not be written ({})", store_path, stats.dropped,
                                                 stats.last_error));
  }
  if (auto renamed = store::renameStoreOver(pending, store_path); !renamed) {
    discard_pending();
    return renamed.error();
  }
  report.records = records;
  report.malformed = trace.malformed();
  report.skipped = trace.skipped;
  return report;
}

std::string summarize(const ImportReport& report) {
  std::size_t logs = 0;
  for (const auto& file : report.files) logs += file.format == InputFormat::kTorchTrace ? 1 : 0;
  std::string line = fmt::format("imported {} file(s) ({} TORCH_TRACE, {} Kineto): {} records", report.files.size(), logs,
                                 report.files.size() - logs, report.records);
  if (report.malformed > 0) {
    line += fmt::format("; skipped {} malformed line(s)/event(s)", report.malformed);
    for (const auto& skipped : report.skipped) line += fmt::format(" [{}: {} {}, first at {}]", skipped.file, skipped.count, skipped.what, skipped.first);
  }
  return line;
}

}  // namespace torchscope::interop
