// The JSON columns that hold declared objects or plain arrays, decoded here so that no reader of the store parses
// them by hand.
#include <nlohmann/json.hpp>

#include "torchscope/store/JsonRecord.h"
#include "torchscope/store/Records.h"

namespace torchscope::store {

std::vector<std::int64_t> CompiledRegion::frameIds() const {
  std::vector<std::int64_t> ids;
  const nlohmann::json array = nlohmann::json::parse(frames, nullptr, /*allow_exceptions=*/false);
  if (!array.is_array()) return ids;
  for (const auto& id : array) {
    if (id.is_number_integer()) ids.push_back(id.get<std::int64_t>());
  }
  return ids;
}

std::vector<CensusOp> OpCensus::frequentOps() const { return recordsFromJsonArray<CensusOp>(frequent_ops); }

std::vector<CensusSite> OpCensus::censusSites() const { return recordsFromJsonArray<CensusSite>(sites); }

std::vector<CensusOp> frequentOpsOf(const CensusSite& site) {
  return recordsFromJsonArray<CensusOp>(site.frequent_ops);
}

std::vector<std::pair<base::Nanos, base::Nanos>> CaptureWindow::openIntervals() const {
  std::vector<std::pair<base::Nanos, base::Nanos>> pairs;
  const nlohmann::json array = nlohmann::json::parse(intervals, nullptr, /*allow_exceptions=*/false);
  if (!array.is_array()) return pairs;
  for (const auto& pair : array) {
    if (!pair.is_array() || pair.size() != 2) continue;
    pairs.emplace_back(integerOf(pair[0], -1), integerOf(pair[1], -1));
  }
  return pairs;
}

}  // namespace torchscope::store
