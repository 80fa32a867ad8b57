// The request figures from the facts computed once per store (Requests.h).
#pragma once

#include "Rules.h"
#include "torchscope/analyzer/Requests.h"

namespace torchscope::analyzer {

// Step source of a request (docs/FORMAT.md, `steps`); the run attribute that holds their batch sizes.
inline constexpr std::string_view kRequestSource = "request";
inline constexpr std::string_view kRequestItemsAttribute = "requests.items";

[[nodiscard]] RequestSummary summarizeRequests(const store::Reader& reader, const Facts& facts);

}  // namespace torchscope::analyzer
