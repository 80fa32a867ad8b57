// What a store of an older readable version holds of a table or a column declared since (Table.h `since_version`):
// the bridge's records before v5 were cpu_ops rows (categories compiled_region, op_census, cudagraphs) and the
// run attribute `capture.window`, JSON text; these statements derive the declared rows from them, so that an older
// store reads as it did. Only the reader uses them.
#pragma once

#include <optional>
#include <string_view>

namespace torchscope::store::legacy {

// A SELECT of `table`'s declared columns, in order, from a store that predates the table; nullopt: such a store
// has none of its rows.
[[nodiscard]] std::optional<std::string_view> rowsOf(std::string_view table);
// An SQL expression over a row of `table` for `column` in a store that predates the column; nullopt: the column
// reads as the struct's default.
[[nodiscard]] std::optional<std::string_view> columnOf(std::string_view table, std::string_view column);

}  // namespace torchscope::store::legacy
