// Shared by the interop tests: their data files and a store's summary.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace torchscope::testing {

std::string corpus(const std::string& relative);    // under tests/corpus/, as the importers take it
std::string testData(const std::string& relative);  // under tests/interop/data/

// Row counts plus a few aggregates per kind of data, as the golden files hold them.
nlohmann::json summarizeStore(const std::string& store_path);

}  // namespace torchscope::testing
