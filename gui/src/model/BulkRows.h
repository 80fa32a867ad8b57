// Reading the bulk tables (kernels, copies, memsets, CUDA API calls, CPU ops, NVTX) as compact rows
// on the timeline's clock, shared by the loader (whole tables, storage order) and the detail window
// (a time range, index order). Only columns of schema v1 are read, so added columns do not matter.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "torchscope/gui/Timeline.h"
#include "torchscope/store/Reader.h"

namespace torchscope::gui::detail {

enum class BulkTable : std::uint8_t { kKernels, kMemcpy, kMemset, kApiCalls, kCpuOps, kNvtx };
inline constexpr std::array<BulkTable, 3> kGpuTables{BulkTable::kMemset, BulkTable::kMemcpy, BulkTable::kKernels};

struct BulkSpec {
  std::string_view table;
  RecordKind kind;
  StatKind stat;
  TrackKind track;
  bool gpu;  // columns a, b are device and stream (else tid and nothing)
};
[[nodiscard]] const BulkSpec& bulkSpec(BulkTable table);
[[nodiscard]] BulkTable bulkTableOf(RecordKind kind);

// One row: `a`, `b` are device and stream for GPU tables, tid and -1 for host tables.
struct BulkRow {
  std::int64_t id = 0;
  std::int64_t pid = 0;
  std::int64_t a = -1;
  std::int64_t b = -1;
  Nanos start_ns = 0;
  Nanos end_ns = 0;
  std::uint32_t name = 0;
  std::int64_t correlation_id = -1;

  [[nodiscard]] Slice slice(RecordKind kind) const { return {start_ns, std::max(start_ns, end_ns), id, name, kind}; }
};

// The labels of rows that have no interned name (copies, memsets), as the SQL of readBulk() writes them.
[[nodiscard]] std::string_view labelSql(BulkTable table);

// Which columns readBulk() reads: all of BulkRow, or only where and when a row lies (id, pid, a, b,
// start_ns, end_ns; name 0 and no correlation id), which costs SQLite about half as much a row.
enum class BulkColumns : std::uint8_t { kAll, kSpans };

// Reads the rows of `table` that pass `where` (SQL over the table's own columns, "" for all) with
// `params` bound in order, ordered by `order` ("" for storage order). Times are shifted by the
// store's shift_ns and names mapped through the store's name tables.
[[nodiscard]] Result<void> readBulk(const store::Reader& reader, const StoreInfo& store, BulkTable table,
                                    std::string_view where, const std::vector<store::QueryParam>& params,
                                    std::string_view order, const std::function<void(const BulkRow&)>& on_row,
                                    BulkColumns columns = BulkColumns::kAll);

}  // namespace torchscope::gui::detail
