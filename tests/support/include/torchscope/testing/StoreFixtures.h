// Builds a store from a small JSON fixture: {"run": {...}, "<table>": [row, ...]} with tables named like the store's
// and rows named like the fields of store/Records.h; every column that store/src/Tables.h lists can be given, one
// left out keeps its default, a JSON column may be given as JSON. A row {"repeat": N, "stride_ns": S, "row": {...},
// "increment": ["field", ...], "increment_by": {"field": amount}} stands for N rows, the i-th shifted by i*S in time,
// with the `increment` fields increased by i and the `increment_by` fields by i*amount.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace torchscope::testing {

// Writes the store at `store_path` (replacing it); returns "" or an error message.
std::string buildStore(const nlohmann::json& fixture, const std::string& store_path);
std::string buildStoreFromFile(const std::string& fixture_path, const std::string& store_path);

}  // namespace torchscope::testing
