// The store's schema version and table list. docs/FORMAT.md documents every table; a test keeps the two in step.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace torchscope::store {

// PRAGMA application_id of every torchscope store ("TSCP").
inline constexpr std::int32_t kApplicationId = 0x54534350;
// PRAGMA user_version: bumped on any change to the tables. Readers refuse a newer version and one older than
// kOldestReadableVersion.
// v2: stacks with library frames, graph-break registry ids, recompile causes with their sources.
// v3: memory (memory_samples, memory_events, memory_holders).
// v4: sampled stacks (stack_frames, stacks, stack_samples); a v3 store reads as one without samples.
// v5: the bridge's records declared (compiled_regions, op_census, capture_window, compiles.cudagraph_skip_reason),
//     which a v3 or v4 store held as JSON in cpu_ops and run_attributes and still reads (store/src/Legacy.cpp).
// A column added later is declared `.since(version)` (Table.h): an older store reads it as its default, so a new
// column does not raise kOldestReadableVersion.
inline constexpr std::int32_t kSchemaVersion = 5;
inline constexpr std::int32_t kOldestReadableVersion = 3;

// The tables of the schema, in creation order.
std::vector<std::string_view> tableNames();
// The full CREATE statements of the schema (tables and views; indexes come at close).
std::string_view schemaSql();
// CREATE INDEX statements built when a run closes.
std::string_view indexSql();

}  // namespace torchscope::store
