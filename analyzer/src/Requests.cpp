#include <algorithm>
#include <charconv>
#include <map>
#include <string>

#include "RequestFacts.h"
#include "Stats.h"
#include "torchscope/base/Saturating.h"

namespace torchscope::analyzer {

namespace {

// The `requests.items` attribute, "first_index:items,..." (docs/FORMAT.md): items by the first request index of each
// run of equal counts; empty when absent or unreadable.
std::map<std::int64_t, std::int64_t> itemRuns(const store::Reader& reader) {
  std::string text;
  (void)reader.query("SELECT value FROM run_attributes WHERE key = '" + std::string(kRequestItemsAttribute) + "'",
                     [&](const store::Row& row) { text = row.text(0); });
  std::map<std::int64_t, std::int64_t> runs;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::size_t colon = text.find(':', begin);
    std::int64_t index = 0;
    std::int64_t items = 0;
    if (colon >= end || std::from_chars(text.data() + begin, text.data() + colon, index).ec != std::errc{} ||
        std::from_chars(text.data() + colon + 1, text.data() + end, items).ec != std::errc{}) {
      return {};
    }
    runs[index] = items;
    begin = end + 1;
  }
  return runs;
}

// The items of request `index`, -1 unknown.
std::int64_t itemsOf(const std::map<std::int64_t, std::int64_t>& runs, std::int64_t index) {
  auto after = runs.upper_bound(index);
  if (after == runs.begin()) return -1;
  return std::prev(after)->second;
}

template <class Number>
Number parsed(const std::string& text, Number otherwise) {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc{} && end == text.data() + text.size() ? value : otherwise;
}

}  // namespace

TransformerFastPath transformerFastPath(const store::Reader& reader) {
  std::map<std::string, std::string, std::less<>> values;
  (void)reader.query("SELECT key, value FROM run_attributes WHERE key LIKE 'transformer.%'",
                     [&](const store::Row& row) { values[row.text(0)] = row.text(1); });
  const auto text = [&](std::string_view key) {
    const auto found = values.find(key);
    return found == values.end() ? std::string() : found->second;
  };
  TransformerFastPath fast_path;
  fast_path.layer_calls = std::max<std::int64_t>(parsed<std::int64_t>(text(kLayerCallsAttribute), 0), 0);
  fast_path.fast_path_calls =
      std::clamp<std::int64_t>(parsed<std::int64_t>(text(kFastPathCallsAttribute), 0), 0, fast_path.layer_calls);
  fast_path.reason = text(kFastPathReasonAttribute);
  fast_path.layer_share = std::clamp(parsed<double>(text(kLayerShareAttribute), 0.0), 0.0, 1.0);
  return fast_path;
}

RequestSummary summarizeRequests(const store::Reader& reader, const Facts& facts) {
  RequestSummary summary;
  const auto is_request = [](const store::Step& step) { return step.source == kRequestSource; };
  summary.requests = std::count_if(facts.steps.begin(), facts.steps.end(), is_request);
  if (summary.requests == 0) return summary;
  summary.recorded = true;
  summary.transformer = transformerFastPath(reader);
  const auto runs = itemRuns(reader);
  std::vector<double> latencies;
  std::int64_t items = 0;
  bool items_known = !runs.empty();
  base::Nanos first_start = 0;
  base::Nanos last_end = 0;
  for (const std::size_t position : facts.steady_steps) {
    const store::Step& step = facts.steps[position];
    if (!is_request(step)) continue;
    if (latencies.empty()) first_start = step.start_ns;
    last_end = std::max(last_end, step.end_ns);
    latencies.push_back(toSeconds(static_cast<double>(base::spanNanos(step.start_ns, step.end_ns))));
    const std::int64_t of_step = itemsOf(runs, step.index);
    if (of_step < 0) items_known = false;
    items += std::max<std::int64_t>(of_step, 0);
  }
  summary.steady = static_cast<std::int64_t>(latencies.size());
  if (latencies.empty()) return summary;
  for (const double seconds : latencies) summary.busy_s += seconds;
  summary.span_s = toSeconds(static_cast<double>(base::spanNanos(first_start, last_end)));
  summary.p50_s = quantile(latencies, 0.5);
  summary.p90_s = quantile(latencies, 0.9);
  summary.p99_s = quantile(latencies, 0.99);
  summary.max_s = *std::max_element(latencies.begin(), latencies.end());
  if (summary.busy_s > 0) summary.requests_per_s = static_cast<double>(summary.steady) / summary.busy_s;
  if (items_known) {
    summary.items = items;
    if (summary.busy_s > 0) summary.items_per_s = static_cast<double>(items) / summary.busy_s;
  }
  return summary;
}

Result<RequestSummary> requestSummary(const store::Reader& reader) {
  auto facts = collectFacts(reader);
  if (!facts) return facts.error();
  return summarizeRequests(reader, *facts);
}

}  // namespace torchscope::analyzer
