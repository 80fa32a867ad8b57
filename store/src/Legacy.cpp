#include "Legacy.h"

#include <array>
#include <utility>

namespace torchscope::store::legacy {

namespace {

// Before v5 (docs/FORMAT.md, *Versions*): each record a cpu_ops row whose `args` held the columns, missing keys
// read as the columns' defaults.
constexpr std::string_view kCompiledRegions = R"sql(SELECT pid, tid, start_ns, end_ns, name,
  coalesce(json_extract(args, '$.region'), -1), coalesce(json_extract(args, '$.step'), -1),
  coalesce(json_extract(args, '$.calls'), 0), coalesce(json_extract(args, '$.wall_ns'), 0),
  coalesce(json_extract(args, '$.compile_calls'), 0), coalesce(json_extract(args, '$.compile_wall_ns'), 0),
  coalesce(json_extract(args, '$.cpu_calls'), 0), coalesce(json_extract(args, '$.cpu_ns'), 0),
  coalesce(json_extract(args, '$.cpu_wall_ns'), -1), coalesce(json_extract(args, '$.cudagraphs') = 1, 0),
  CASE WHEN json_type(args, '$.frames') = 'array' THEN json_extract(args, '$.frames') ELSE '[]' END,
  coalesce(json_extract(args, '$.site_file'), ''), coalesce(json_extract(args, '$.site_line'), -1),
  coalesce(json_extract(args, '$.site_function'), ''), coalesce(json_extract(args, '$.call_file'), ''),
  coalesce(json_extract(args, '$.call_line'), -1), coalesce(json_extract(args, '$.call_function'), '')
FROM cpu_ops_v WHERE category = 'compiled_region' AND json_valid(args) ORDER BY start_ns, id)sql";

constexpr std::string_view kOpCensus = R"sql(SELECT pid, tid, start_ns, end_ns,
  coalesce(json_extract(args, '$.step'), -1), coalesce(json_extract(args, '$.step_ns'), 0),
  coalesce(json_extract(args, '$.ops'), 0), coalesce(json_extract(args, '$.op_ns'), 0),
  coalesce(json_extract(args, '$.short_ops'), 0), coalesce(json_extract(args, '$.short_op_ns'), 0),
  coalesce(json_extract(args, '$.short_op_threshold_ns'), 0), coalesce(json_extract(args, '$.distinct_ops'), 0),
  coalesce(json_extract(args, '$.op_overhead_ns'), -1),
  CASE WHEN json_type(args, '$.frequent_ops') = 'array' THEN json_extract(args, '$.frequent_ops') ELSE '[]' END,
  coalesce(json_extract(args, '$.model'), ''), coalesce(json_extract(args, '$.model_file'), ''),
  coalesce(json_extract(args, '$.model_line'), -1), coalesce(json_extract(args, '$.model_function'), ''),
  coalesce(json_extract(args, '$.step_file'), ''), coalesce(json_extract(args, '$.step_line'), -1),
  coalesce(json_extract(args, '$.step_function'), ''),
  CASE WHEN json_type(args, '$.sites') = 'array' THEN json_extract(args, '$.sites') ELSE '[]' END
FROM cpu_ops WHERE category = 'op_census' AND json_valid(args) ORDER BY start_ns, id)sql";

// The run attribute `capture.window`, a JSON object of the same keys; the store's process is its pid.
constexpr std::string_view kCaptureWindow = R"sql(SELECT coalesce((SELECT min(pid) FROM processes), 0),
  json_extract(value, '$.mode'), coalesce(json_extract(value, '$.first_step'), 0),
  coalesce(json_extract(value, '$.end_step'), -1), coalesce(json_extract(value, '$.delay_s'), 0.0),
  coalesce(json_extract(value, '$.duration_s'), -1.0), coalesce(json_extract(value, '$.signal'), ''),
  CASE WHEN json_type(value, '$.intervals') = 'array' THEN json_extract(value, '$.intervals') ELSE '[]' END,
  coalesce(json_extract(value, '$.open_s'), 0.0), coalesce(json_extract(value, '$.steps'), 0),
  coalesce(json_extract(value, '$.first_kept_step'), -1), coalesce(json_extract(value, '$.last_kept_step'), -1)
FROM run_attributes WHERE key = 'capture.window' AND json_valid(value) AND json_type(value, '$.mode') = 'text')sql";

// A compile's CUDA-graph skip: a `cudagraphs` row named `skipped` with the compile's ids.
constexpr std::string_view kCudagraphSkipReason = R"sql(coalesce((SELECT json_extract(c.args, '$.reason')
  FROM cpu_ops_v c WHERE c.category = 'cudagraphs' AND c.name = 'skipped' AND json_valid(c.args)
  AND json_extract(c.args, '$.frame_id') = compiles.frame_id
  AND coalesce(json_extract(c.args, '$.frame_compile_id'), compiles.frame_compile_id) = compiles.frame_compile_id
  AND c.pid = compiles.pid ORDER BY c.start_ns DESC LIMIT 1), ''))sql";

constexpr std::string_view kCollectives = R"sql(SELECT pid, tid, start_ns, end_ns, name,
  coalesce(json_extract(args, '$.op'), ''), coalesce(json_extract(args, '$.backend'), ''),
  coalesce(json_extract(args, '$.bytes'), 0), coalesce(json_extract(args, '$.source'), ''),
  coalesce(json_extract(args, '$.async') = 1, 0), coalesce(json_extract(args, '$.bucket'), -1),
  coalesce(json_extract(args, '$.last_bucket') = 1, 0)
FROM cpu_ops_v WHERE category = 'collective' AND json_valid(args) ORDER BY start_ns, id)sql";

constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kRows{{
    {"collectives", kCollectives},
    {"compiled_regions", kCompiledRegions},
    {"op_census", kOpCensus},
    {"capture_window", kCaptureWindow},
}};

}  // namespace

std::optional<std::string_view> rowsOf(std::string_view table) {
  for (const auto& [name, sql] : kRows) {
    if (name == table) return sql;
  }
  return std::nullopt;
}

std::optional<std::string_view> columnOf(std::string_view table, std::string_view column) {
  if (table == "compiles" && column == "cudagraph_skip_reason") return kCudagraphSkipReason;
  return std::nullopt;
}

}  // namespace torchscope::store::legacy
