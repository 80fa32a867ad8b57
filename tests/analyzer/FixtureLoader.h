// Builds a store from a small JSON fixture: {"run": {...}, "<table>": [row, ...]} with rows named like the
// fields of store/Records.h. A row {"repeat": N, "stride_ns": S, "row": {...}, "increment": ["field", ...]}
// stands for N rows, the i-th shifted by i*S in time and with the listed integer fields increased by i.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace torchscope::analyzer::testing {

// Writes the store at `store_path` (replacing it); returns "" or an error message.
std::string buildStore(const nlohmann::json& fixture, const std::string& store_path);
std::string buildStoreFromFile(const std::string& fixture_path, const std::string& store_path);

}  // namespace torchscope::analyzer::testing
