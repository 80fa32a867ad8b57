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
#include <tuple>
#include <utility>
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

// The rows a trace holds for each table of the store: one vector per record type of store::RowRecords.
template <class Records>
struct RowsOf;
template <class... Ts>
struct RowsOf<std::tuple<Ts...>> {
  using type = std::tuple<std::vector<Ts>...>;
};

// A trace holds rows of every table the store declares (store::RowRecords), so that a new table or column
// needs nothing here: a parser adds a row with `trace.add(kernel)` and reads them back with
// `trace.rows<store::Kernel>()`.
struct ImportedTrace {
  store::RunInfo run;
  std::vector<SkippedInput> skipped;

  template <store::RowRecord T>
  [[nodiscard]] std::vector<T>& rows() {
    return std::get<std::vector<T>>(tables_);
  }
  template <store::RowRecord T>
  [[nodiscard]] const std::vector<T>& rows() const {
    return std::get<std::vector<T>>(tables_);
  }
  // Rows of the tables Ts, together.
  template <store::RowRecord... Ts>
  [[nodiscard]] std::size_t count() const {
    return (rows<Ts>().size() + ...);
  }
  template <store::RowRecord T>
  void add(T row) {
    rows<T>().push_back(std::move(row));
  }
  // Calls visit(rows) with the rows of each table, in the store's table order.
  template <class F>
  void forEachTable(F&& visit) {
    std::apply([&](auto&... each) { (visit(each), ...); }, tables_);
  }
  template <class F>
  void forEachTable(F&& visit) const {
    std::apply([&](const auto&... each) { (visit(each), ...); }, tables_);
  }

  [[nodiscard]] std::int64_t malformed() const;
  // Earliest start and latest end over every row with a time (its table's declared time columns); {0, -1}
  // when there is none.
  [[nodiscard]] std::pair<base::Nanos, base::Nanos> span() const;

 private:
  RowsOf<store::RowRecords>::type tables_;
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
