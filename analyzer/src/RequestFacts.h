// The request figures from the facts computed once per store (Requests.h).
#pragma once

#include "Rules.h"
#include "torchscope/analyzer/Requests.h"

namespace torchscope::analyzer {

// Step source of a request (docs/FORMAT.md, `steps`); the run attribute that holds their batch sizes.
inline constexpr std::string_view kRequestSource = "request";
inline constexpr std::string_view kRequestItemsAttribute = "requests.items";
// The bridge's fast-path probe (collector/python/torchscope_bridge/fastpath.py).
inline constexpr std::string_view kLayerCallsAttribute = "transformer.layer_calls";
inline constexpr std::string_view kFastPathCallsAttribute = "transformer.fast_path_calls";
inline constexpr std::string_view kFastPathReasonAttribute = "transformer.fast_path_reason";
inline constexpr std::string_view kLayerShareAttribute = "transformer.layer_share";

[[nodiscard]] TransformerFastPath transformerFastPath(const store::Reader& reader);
[[nodiscard]] RequestSummary summarizeRequests(const store::Reader& reader, const Facts& facts);

}  // namespace torchscope::analyzer
