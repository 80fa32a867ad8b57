// An inference job's requests (docs/FORMAT.md, `steps` of source `request`): latency percentiles and throughput over
// the steady-state requests, which leave out the warm-up as training steps do.
#pragma once

#include <cstdint>
#include <string>

#include "torchscope/base/Result.h"
#include "torchscope/store/Reader.h"

namespace torchscope::analyzer {

// Whether nn.TransformerEncoderLayer ran torch's fused kernel at the first request, from the bridge's probe
// (docs/FORMAT.md, run attributes `transformer.*`).
struct TransformerFastPath {
  std::int64_t layer_calls = 0;      // the layer calls the probe saw; 0: no encoder layer, or not watched
  std::int64_t fast_path_calls = 0;  // of them, those that took the fast path
  std::string reason;                // torch's reason for the most frequent miss, "" when none missed
  double layer_share = 0;            // the layers' share of that request's time, in [0, 1]
  [[nodiscard]] bool missed() const { return fast_path_calls < layer_calls; }
};

struct RequestSummary {
  bool recorded = false;      // the run's steps are requests
  std::int64_t requests = 0;  // every request
  std::int64_t steady = 0;    // the steady-state ones: the figures below are theirs
  double p50_s = 0;
  double p90_s = 0;
  double p99_s = 0;
  double max_s = 0;
  double busy_s = 0;          // their latencies added up
  double span_s = 0;          // from the first one's start to the last one's end
  double requests_per_s = 0;  // over the busy time: a serving loop's wait for input is left out
  std::int64_t items = -1;    // the items (batch sizes) they held, -1 unknown
  double items_per_s = -1;    // over the busy time, -1 unknown
  TransformerFastPath transformer;
  // The share of their span spent between requests (waiting for input, or the job's own work around the calls).
  [[nodiscard]] double waitShare() const { return span_s > 0 ? 1.0 - busy_s / span_s : 0.0; }
};

// The request figures of one store; recorded is false for a store whose steps are not requests.
[[nodiscard]] Result<RequestSummary> requestSummary(const store::Reader& reader);

}  // namespace torchscope::analyzer
