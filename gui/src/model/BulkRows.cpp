#include "BulkRows.h"

#include <fmt/format.h>

namespace torchscope::gui::detail {

namespace {

constexpr std::array<BulkSpec, 6> kSpecs{{
    {"kernels", RecordKind::kKernel, StatKind::kKernel, TrackKind::kGpuStream, true},
    {"memcpy", RecordKind::kMemcpy, StatKind::kMemcpy, TrackKind::kGpuStream, true},
    {"memset", RecordKind::kMemset, StatKind::kMemset, TrackKind::kGpuStream, true},
    {"api_calls", RecordKind::kApiCall, StatKind::kApiCall, TrackKind::kApiCalls, false},
    {"cpu_ops", RecordKind::kCpuOp, StatKind::kCpuOp, TrackKind::kCpuOps, false},
    {"nvtx", RecordKind::kNvtx, StatKind::kNvtx, TrackKind::kNvtx, false},
}};

// The columns of each table as (id, pid, a, b, start_ns, end_ns, name_id, label, correlation_id).
std::string_view columnsSql(BulkTable table) {
  switch (table) {
    case BulkTable::kKernels: return "id, pid, device, stream, start_ns, end_ns, name_id, NULL, correlation_id";
    case BulkTable::kMemcpy: return "id, pid, device, stream, start_ns, end_ns, -1, {label}, correlation_id";
    case BulkTable::kMemset: return "id, pid, device, stream, start_ns, end_ns, -1, {label}, correlation_id";
    case BulkTable::kApiCalls: return "id, pid, tid, -1, start_ns, end_ns, name_id, NULL, correlation_id";
    case BulkTable::kCpuOps: return "id, pid, tid, -1, start_ns, end_ns, name_id, NULL, -1";
    case BulkTable::kNvtx: return "id, pid, tid, -1, start_ns, end_ns, name_id, NULL, -1";
  }
  return "";
}

// Where and when: the first six columns of columnsSql().
std::string_view spanColumnsSql(BulkTable table) {
  return bulkSpec(table).gpu ? "id, pid, device, stream, start_ns, end_ns" : "id, pid, tid, -1, start_ns, end_ns";
}

}  // namespace

const BulkSpec& bulkSpec(BulkTable table) { return kSpecs[static_cast<std::size_t>(table)]; }

BulkTable bulkTableOf(RecordKind kind) {
  switch (kind) {
    case RecordKind::kMemcpy: return BulkTable::kMemcpy;
    case RecordKind::kMemset: return BulkTable::kMemset;
    case RecordKind::kApiCall: return BulkTable::kApiCalls;
    case RecordKind::kCpuOp: return BulkTable::kCpuOps;
    case RecordKind::kNvtx: return BulkTable::kNvtx;
    default: return BulkTable::kKernels;
  }
}

std::string_view labelSql(BulkTable table) {
  switch (table) {
    case BulkTable::kMemcpy: return "'Memcpy ' || copy_kind || CASE WHEN pageable THEN ' (pageable)' ELSE '' END";
    case BulkTable::kMemset: return "'Memset'";
    default: return "NULL";
  }
}

Result<void> readBulk(const store::Reader& reader, const StoreInfo& store, BulkTable table, std::string_view where,
                      const std::vector<store::QueryParam>& params, std::string_view order,
                      const std::function<void(const BulkRow&)>& on_row, BulkColumns columns) {
  const bool spans = columns == BulkColumns::kSpans;
  std::string sql =
      fmt::format("SELECT {} FROM {}", spans ? spanColumnsSql(table) : columnsSql(table), bulkSpec(table).table);
  if (const auto label = sql.find("{label}"); label != std::string::npos) sql.replace(label, 7, labelSql(table));
  // Before v5 collectives were cpu_ops rows; the reader now gives them as the collectives table (their own track).
  const bool legacy_collectives =
      table == BulkTable::kCpuOps && reader.schemaVersion() < store::Collective::kTable.since_version;
  if (!where.empty() && legacy_collectives) {
    sql += fmt::format(" WHERE ({}) AND category <> 'collective'", where);
  } else if (!where.empty()) {
    sql += fmt::format(" WHERE {}", where);
  } else if (legacy_collectives) {
    sql += " WHERE category <> 'collective'";
  }
  if (!order.empty()) sql += fmt::format(" ORDER BY {}", order);
  const Nanos shift = store.shift_ns;
  BulkRow row;
  return reader.query(sql, [&](const store::Row& r) {
    row.id = r.integer(0);
    row.pid = r.integer(1);
    row.a = r.integer(2);
    row.b = r.integer(3);
    row.start_ns = base::saturatingAdd(r.integer(4), shift);
    row.end_ns = base::saturatingAdd(r.integer(5), shift);
    if (spans) {
      on_row(row);
      return;
    }
    const std::int64_t name_id = r.integer(6);
    if (name_id >= 0 && static_cast<std::size_t>(name_id) < store.string_names.size()) {
      row.name = store.string_names[static_cast<std::size_t>(name_id)];
    } else {
      const auto label = store.labels.find(r.text(7));
      row.name = label != store.labels.end() ? label->second : 0;
    }
    row.correlation_id = r.integer(8);
    on_row(row);
  }, params);
}

}  // namespace torchscope::gui::detail
