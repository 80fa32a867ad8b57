// The requests of a native libtorch program: each outermost call of an AOTInductor package's run() (or a
// RECORD_USER_SCOPE("torchscope.request") block) on a thread, from its call to its return, is a step of kind
// `request`; the third one's operators are counted through a RecordFunction callback (the op census).
#pragma once

#include <ATen/record_function.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "torchscope/collector/libtorch_plugin.h"

namespace torchscope::collector::libtorch {

// Two requests warm up (caches, the allocator, the package's first-call set-up); the census counts the next.
inline constexpr std::int64_t kCensusRequest = 2;
inline constexpr std::int64_t kShortOpNs = 50'000;  // the bridge's census threshold (docs/FORMAT.md, op_census)

class RequestRecorder {
 public:
  explicit RequestRecorder(const TorchscopeCollectorApi& collector);
  RequestRecorder(const RequestRecorder&) = delete;
  RequestRecorder& operator=(const RequestRecorder&) = delete;

  // One request on the calling thread, from construction to destruction; a request inside another on the same
  // thread is part of it. `items` is the batch size (-1 unknown), `model` what was called.
  class Scope {
   public:
    Scope(RequestRecorder& recorder, std::int64_t items, const char* model);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    RequestRecorder* recorder_ = nullptr;  // null for a nested request
    std::int64_t index_ = -1;
    std::int64_t start_ns_ = 0;
    const char* model_ = "";
  };

  // The RecordFunction callbacks: the request marker, always on for user scopes, and the census's, on for the
  // counted request only.
  void installCallbacks();
  // The run attribute requests.items (docs/FORMAT.md), in full: called at exit.
  void writeItems();

 private:
  struct OpFigures {
    std::int64_t count = 0;
    std::int64_t ns = 0;
  };
  struct Census {
    std::int64_t ops = 0;
    std::int64_t op_ns = 0;
    std::int64_t short_ops = 0;
    std::int64_t short_op_ns = 0;
    std::unordered_map<std::string, OpFigures> by_name;
  };

  std::int64_t begin(std::int64_t items);
  void end(std::int64_t index, std::int64_t start_ns, const char* model);
  void noteItems(std::int64_t index, std::int64_t items);
  void writeCensus(std::int64_t index, std::int64_t start_ns, std::int64_t end_ns, const char* model);

  static std::unique_ptr<at::ObserverContext> markerStarted(const at::RecordFunction& function);
  static void markerEnded(const at::RecordFunction& function, at::ObserverContext* context);
  static std::unique_ptr<at::ObserverContext> opStarted(const at::RecordFunction& function);
  static void opEnded(const at::RecordFunction& function, at::ObserverContext* context);

  TorchscopeCollectorApi collector_;
  std::atomic<std::int64_t> next_index_{0};
  at::CallbackHandle census_callback_ = 0;

  std::mutex mutex_;                                               // guards what follows
  std::vector<std::pair<std::int64_t, std::int64_t>> items_runs_;  // (first request, items)
  Census census_;
};

}  // namespace torchscope::collector::libtorch
