#include "Requests.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <ctime>

namespace torchscope::collector::libtorch {
namespace {

using json = nlohmann::json;

constexpr char kMarkerName[] = "torchscope.request";
constexpr std::size_t kFrequentOpsKept = 5;
constexpr std::size_t kItemsRunsWrittenAtOnce = 32;

// The collector's time base (docs/FORMAT.md, *Time base*).
std::int64_t monotonicNow() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

RequestRecorder* active_recorder = nullptr;  // set once, before the callbacks are installed; never freed

thread_local int request_depth = 0;
thread_local bool counting_ops = false;  // this thread runs the counted request
thread_local int op_depth = 0;

struct MarkerContext : at::ObserverContext {
  explicit MarkerContext(RequestRecorder& recorder) : scope(recorder, -1, kMarkerName) {}
  RequestRecorder::Scope scope;
};

struct OpContext : at::ObserverContext {
  std::int64_t start_ns = 0;
  bool outermost = false;
};

}  // namespace

RequestRecorder::RequestRecorder(const TorchscopeCollectorApi& collector) : collector_(collector) {}

RequestRecorder::Scope::Scope(RequestRecorder& recorder, std::int64_t items, const char* model) {
  if (request_depth++ > 0) return;
  recorder_ = &recorder;
  model_ = model;
  index_ = recorder.begin(items);
  start_ns_ = monotonicNow();
}

RequestRecorder::Scope::~Scope() {
  --request_depth;
  if (recorder_ == nullptr) return;
  try {
    recorder_->end(index_, start_ns_, model_);
  } catch (...) {
  }
}

std::int64_t RequestRecorder::begin(std::int64_t items) {
  const std::int64_t index = next_index_.fetch_add(1, std::memory_order_relaxed);
  noteItems(index, items);
  if (index == kCensusRequest && census_callback_ != 0) {
    counting_ops = true;
    at::reenableCallback(census_callback_);
  }
  return index;
}

void RequestRecorder::end(std::int64_t index, std::int64_t start_ns, const char* model) {
  const std::int64_t end_ns = monotonicNow();
  const bool counted = counting_ops;
  if (counted) {
    at::disableCallback(census_callback_);
    counting_ops = false;
  }
  // Outside the capture window the collector keeps no step, and no census of it.
  if (collector_.record_step(index, start_ns, end_ns, "request") != 0) return;
  if (counted) writeCensus(index, start_ns, end_ns, model);
}

void RequestRecorder::noteItems(std::int64_t index, std::int64_t items) {
  bool write = false;
  {
    std::lock_guard lock(mutex_);
    if (!items_runs_.empty() && items_runs_.back().second == items) return;
    items_runs_.emplace_back(index, items);
    // Rewritten while it is short; a server alternating sizes has a run per request: written at exit instead.
    write = items_runs_.size() <= kItemsRunsWrittenAtOnce;
  }
  if (write) writeItems();
}

void RequestRecorder::writeItems() {
  std::string value;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [first, count] : items_runs_) {
      if (!value.empty()) value += ',';
      value += std::to_string(first) + ':' + std::to_string(count);
    }
  }
  if (value.empty()) return;
  (void)collector_.record_json("run_attributes", json{{"key", "requests.items"}, {"value", value}}.dump().c_str());
}

void RequestRecorder::writeCensus(std::int64_t index, std::int64_t start_ns, std::int64_t end_ns, const char* model) {
  json row;
  {
    std::lock_guard lock(mutex_);
    std::vector<std::pair<std::string, OpFigures>> names(census_.by_name.begin(), census_.by_name.end());
    std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) {
      return a.second.count != b.second.count ? a.second.count > b.second.count : a.first < b.first;
    });
    json frequent = json::array();
    for (std::size_t i = 0; i < names.size() && i < kFrequentOpsKept; ++i) {
      frequent.push_back({{"name", names[i].first}, {"count", names[i].second.count}, {"ns", names[i].second.ns}});
    }
    row = {{"start_ns", start_ns},
           {"step", index},
           {"step_ns", end_ns - start_ns},
           {"ops", census_.ops},
           {"op_ns", census_.op_ns},
           {"short_ops", census_.short_ops},
           {"short_op_ns", census_.short_op_ns},
           {"short_op_threshold_ns", kShortOpNs},
           {"distinct_ops", census_.by_name.size()},
           {"op_overhead_ns", -1},
           {"frequent_ops", std::move(frequent)},
           {"model", model},
           {"sites", json::array()}};
  }
  row["end_ns"] = monotonicNow();  // the census's own work ends here
  (void)collector_.record_json("op_census", row.dump().c_str());
}

void RequestRecorder::installCallbacks() {
  active_recorder = this;
  at::addGlobalCallback(at::RecordFunctionCallback(&markerStarted, &markerEnded)
                            .scopes({at::RecordScope::USER_SCOPE})
                            .needsInputs(false)
                            .needsOutputs(false)
                            .needsIds(false));
  census_callback_ = at::addGlobalCallback(at::RecordFunctionCallback(&opStarted, &opEnded)
                                               .scopes({at::RecordScope::FUNCTION})
                                               .needsInputs(false)
                                               .needsOutputs(false)
                                               .needsIds(false));
  at::disableCallback(census_callback_);
}

std::unique_ptr<at::ObserverContext> RequestRecorder::markerStarted(const at::RecordFunction& function) {
  try {
    if (active_recorder == nullptr || std::strcmp(function.name(), kMarkerName) != 0) return nullptr;
    return std::make_unique<MarkerContext>(*active_recorder);
  } catch (...) {
    return nullptr;
  }
}

// The request ends when RecordFunction destroys the context, right after this.
void RequestRecorder::markerEnded(const at::RecordFunction& /*function*/, at::ObserverContext* /*context*/) {}

std::unique_ptr<at::ObserverContext> RequestRecorder::opStarted(const at::RecordFunction& /*function*/) {
  if (!counting_ops) return nullptr;  // another thread than the counted request's
  try {
    auto context = std::make_unique<OpContext>();
    context->outermost = op_depth++ == 0;
    context->start_ns = monotonicNow();
    return context;
  } catch (...) {
    return nullptr;
  }
}

void RequestRecorder::opEnded(const at::RecordFunction& function, at::ObserverContext* context) {
  auto* op = static_cast<OpContext*>(context);
  if (op == nullptr) return;
  --op_depth;
  if (!op->outermost || active_recorder == nullptr) return;  // an op's inner calls are not counted again
  const std::int64_t ns = monotonicNow() - op->start_ns;
  try {
    RequestRecorder& recorder = *active_recorder;
    std::lock_guard lock(recorder.mutex_);
    Census& census = recorder.census_;
    census.ops += 1;
    census.op_ns += ns;
    if (ns < kShortOpNs) {
      census.short_ops += 1;
      census.short_op_ns += ns;
    }
    OpFigures& figures = census.by_name[function.name()];
    figures.count += 1;
    figures.ns += ns;
  } catch (...) {
  }
}

}  // namespace torchscope::collector::libtorch
