// JSON text of documents that carry text from a store or a foreign file (kernel names, reasons,
// paths, command lines): bytes that are not UTF-8 are replaced with U+FFFD, where nlohmann::json's
// dump() would throw by default. Every JSON document torchscope writes out goes through it.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace torchscope::store {

// `indent` as nlohmann::json::dump's: -1 for one line.
[[nodiscard]] inline std::string dumpJson(const nlohmann::json& document, int indent = -1) {
  return document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace torchscope::store
