#include "StepMarks.h"

namespace torchscope::collector {

std::optional<EndedStep> StepMarks::optimizerStepped(OptimizerId optimizer, std::int64_t now_ns) {
  std::lock_guard lock(mutex_);
  if (markers_ || !tracks(optimizer)) return std::nullopt;
  optimizerTakesOver();
  optimizer_seen_ = true;
  return endStep(now_ns, "optimizer");
}

std::optional<EndedStep> StepMarks::zeroGrad(OptimizerId optimizer, std::int64_t now_ns) {
  std::lock_guard lock(mutex_);
  if (markers_ || optimizer_seen_ || !tracks(optimizer)) return std::nullopt;
  optimizerTakesOver();
  return endStep(now_ns, "zero_grad");
}

std::optional<EndedStep> StepMarks::backward(std::int64_t now_ns) {
  std::lock_guard lock(mutex_);
  backward_seen_ = true;
  held_request_.reset();
  if (markers_ || optimizer_used_) return std::nullopt;
  return endStep(now_ns, "backward");
}

std::optional<EndedStep> StepMarks::marker(std::int64_t now_ns) {
  std::lock_guard lock(mutex_);
  markers_ = true;
  held_request_.reset();
  return endStep(now_ns, "marker");
}

std::optional<EndedStep> StepMarks::request(std::int64_t start_ns, std::int64_t now_ns, std::int64_t items,
                                            bool marked) {
  std::lock_guard lock(mutex_);
  if (markers_ || optimizer_used_ || backward_seen_) return std::nullopt;
  if (marked && !request_markers_) {
    request_markers_ = true;  // the module call this block holds was held as a request: the block replaces it
    held_request_.reset();
  } else if (!marked && request_markers_) {
    return std::nullopt;
  }
  std::optional<EndedStep> ended = commitRequest();
  held_request_ = HeldRequest{start_ns, now_ns, items};
  return ended;
}

std::optional<EndedStep> StepMarks::flushRequest() {
  std::lock_guard lock(mutex_);
  if (markers_ || optimizer_used_ || backward_seen_) return std::nullopt;
  return commitRequest();
}

std::vector<RequestItems> StepMarks::requestItems() const {
  std::lock_guard lock(mutex_);
  return request_items_;
}

std::optional<EndedStep> StepMarks::commitRequest() {
  if (!held_request_) return std::nullopt;
  const HeldRequest held = *held_request_;
  held_request_.reset();
  const std::int64_t index = next_index_++;
  if (request_items_.empty() || request_items_.back().items != held.items)
    request_items_.push_back({index, held.items});
  return EndedStep{index, held.start_ns, held.end_ns, "request"};
}

bool StepMarks::zeroGradCanMark() const { return !markers_ && !optimizer_seen_; }

bool StepMarks::backwardCanMark() const { return !markers_ && !optimizer_used_; }

bool StepMarks::requestCanMark() const { return !markers_ && !optimizer_used_ && !backward_seen_; }

std::int64_t StepMarks::nextIndex() const {
  std::lock_guard lock(mutex_);
  return next_index_;
}

void StepMarks::followUpFrom(std::int64_t index, bool outside_window) {
  std::lock_guard lock(mutex_);
  follow_up_from_ = index;
  follow_up_outside_window_ = outside_window;
}

bool StepMarks::followUpDue(std::int64_t index, bool stored) const {
  std::lock_guard lock(mutex_);
  return index >= follow_up_from_ && (stored || follow_up_outside_window_);
}

void StepMarks::reset() {
  std::lock_guard lock(mutex_);
  next_index_ = 0;
  last_ns_ = kNone;
  optimizer_ = 0;
  optimizer_seen_ = optimizer_used_ = markers_ = backward_seen_ = false;
  held_request_.reset();
  request_markers_ = false;
  request_items_.clear();
  follow_up_from_ = 0;
  follow_up_outside_window_ = true;
}

std::optional<EndedStep> StepMarks::endStep(std::int64_t now_ns, const char* source) {
  const std::int64_t start_ns = last_ns_;
  last_ns_ = now_ns;
  if (start_ns == kNone) return std::nullopt;  // the first mark only starts step 0
  return EndedStep{next_index_++, start_ns, now_ns, source};
}

bool StepMarks::tracks(OptimizerId optimizer) {
  if (optimizer_ == 0) optimizer_ = optimizer;
  return optimizer_ == optimizer;
}

void StepMarks::optimizerTakesOver() {
  // Steps marked by backward() so far (a warm-up without an optimizer) stay; the optimizer's first mark starts its
  // first step, as it would have without them (the first backward() of an optimizer loop only set a start).
  if (optimizer_used_) return;
  optimizer_used_ = true;
  held_request_.reset();
  last_ns_ = kNone;
}

}  // namespace torchscope::collector
