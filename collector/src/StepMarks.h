// Where the bridge's training steps end, kept natively: the step end runs after every optimizer step, cold (the
// step's kernels have pushed the interpreter's code and data out of the caches), where each Python call and
// attribute on its path cost about a microsecond; as one builtin call it costs a few (docs/performance.md,
// *Collector*).
//
// An eager `optimizer.step()` runs its post-hooks; a compiled one runs none, so the compiled region that steps an
// optimizer ends the step when it returns (the bridge's compile wrapper); `zero_grad()` marks steps when no
// optimizer step is seen; `backward()` marks them when no optimizer is used at all (a manual update such as
// `p.data.add_(p.grad, alpha=-lr)`); `torchscope.step()` markers replace all of them.
//
// A job that runs none of these (inference: no backward(), no optimizer, no marker) has steps of kind `request`: each
// call of its outermost module with parameters, or each `torchscope.request()` block, from its start to its return,
// so that a serving loop's wait between requests is no step's time. A request is recorded once the next one starts
// (or at exit): a training job's first forward is seen before its first backward(), and is then no request.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

namespace torchscope::collector {

// A step that has just ended; `source` is a static string ("optimizer", "zero_grad", "backward", "marker",
// "request").
struct EndedStep {
  std::int64_t index = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  const char* source = "";
};

// Requests from step `first_index` on carry `items` each (the batch size of the call's first tensor argument, -1
// unknown), until the next run.
struct RequestItems {
  std::int64_t first_index = 0;
  std::int64_t items = -1;
  bool operator==(const RequestItems&) const = default;
};

// The marking rules, without a clock or a store: each event gets its time and answers the step it ended, if any.
// Safe to call from any thread (the steps of threads marking at once each get their own index and start).
class StepMarks {
 public:
  using OptimizerId = std::uintptr_t;  // the optimizer's id() in Python

  // An optimizer's step() returned (its post-hook), or a compiled region that steps it. With several optimizers
  // the first one to step marks the steps.
  std::optional<EndedStep> optimizerStepped(OptimizerId optimizer, std::int64_t now_ns);
  // Step 0 starts at the first zero_grad(); later ones mark steps only while no optimizer step was seen.
  std::optional<EndedStep> zeroGrad(OptimizerId optimizer, std::int64_t now_ns);
  // A backward() outside compiled code: ends a step while no optimizer and no marker is seen. The step is the time
  // between two backward() calls, so the first one starts step 0 (a training loop's period, as `torchscope fix`
  // counts it when no optimizer steps).
  std::optional<EndedStep> backward(std::int64_t now_ns);
  // torchscope.step(): from the first one on, only markers end steps.
  std::optional<EndedStep> marker(std::int64_t now_ns);
  // A request ran from start_ns to now_ns with `items` items: answers the request before it, which is now known to
  // be one. `marked`: a torchscope.request() block; from the first one on, only those are requests.
  std::optional<EndedStep> request(std::int64_t start_ns, std::int64_t now_ns, std::int64_t items, bool marked);
  // At exit: the last request, if one is held.
  std::optional<EndedStep> flushRequest();
  // The items of the requests recorded so far, one entry per run of equal counts.
  [[nodiscard]] std::vector<RequestItems> requestItems() const;

  // Whether zero_grad() and backward() can still end a step in this process (a fork child's reset() starts afresh):
  // once an optimizer or a marker took over they never will, and the bridge takes its wrappers out of torch.
  [[nodiscard]] bool zeroGradCanMark() const;
  [[nodiscard]] bool backwardCanMark() const;
  // Whether requests can still be steps: not once a backward(), an optimizer or a torchscope.step() was seen.
  [[nodiscard]] bool requestCanMark() const;

  // The index the next step will have (how many ended so far).
  [[nodiscard]] std::int64_t nextIndex() const;

  // The bridge's per-step work in Python (compiled regions, the op census, memory beyond the host RSS) is due from
  // this step index on, for the steps outside the capture window too when `outside_window`; a step end it is not due
  // for makes no Python call.
  void followUpFrom(std::int64_t index, bool outside_window);
  [[nodiscard]] bool followUpDue(std::int64_t index, bool stored) const;

  // A fork() child starts afresh, following every step up until its bridge says otherwise.
  void reset();

 private:
  std::optional<EndedStep> endStep(std::int64_t now_ns, const char* source);  // needs mutex_
  bool tracks(OptimizerId optimizer);                                         // needs mutex_
  void optimizerTakesOver();                                                  // needs mutex_
  std::optional<EndedStep> commitRequest();                                   // needs mutex_

  static constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min();

  mutable std::mutex mutex_;
  std::int64_t next_index_ = 0;
  std::int64_t last_ns_ = kNone;  // the end of the last step: the start of the next (none before the first mark)
  OptimizerId optimizer_ = 0;     // the optimizer that marks steps (0: none yet)
  // Written under mutex_; atomic so that zeroGradCanMark() and backwardCanMark(), asked after each event of a job that
  // marks with zero_grad() or backward(), take no lock.
  std::atomic<bool> optimizer_seen_{false};  // an optimizer step was seen: zero_grad() no longer marks
  std::atomic<bool> optimizer_used_{
      false};  // an optimizer's step() or zero_grad() was seen: backward() no longer marks
  std::atomic<bool> markers_{false};
  std::atomic<bool> backward_seen_{false};
  // The last request, recorded when the next one shows that the job is still one of requests.
  struct HeldRequest {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t items = -1;
  };
  std::optional<HeldRequest> held_request_;
  bool request_markers_ = false;
  std::vector<RequestItems> request_items_;
  std::int64_t follow_up_from_ = 0;
  bool follow_up_outside_window_ = true;
};

}  // namespace torchscope::collector
