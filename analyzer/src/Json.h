// JSON text of documents that carry strings from a store (kernel names, reasons, paths): bytes that
// are not UTF-8 are replaced with U+FFFD instead of making nlohmann::json throw mid-report.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace torchscope::analyzer {

[[nodiscard]] inline std::string dumpJson(const nlohmann::json& document, int indent = -1) {
  return document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace torchscope::analyzer
