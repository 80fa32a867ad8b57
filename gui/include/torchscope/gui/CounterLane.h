// One counter lane of the timeline: a value over time (host RSS, a GPU allocator's allocated or
// reserved bytes), each sample holding until the next one, with a level-of-detail summary (min and
// max per power-of-two time bucket) so that drawing a frame visits a number of items bounded by the
// pixel width, not by the number of samples. Qt-free.
//
// Like a slice Lane, a counter lane is exact (it keeps every sample) or summarised: past
// `exact_limit` samples it keeps only its buckets, down to the timeline's finest bucket width. A
// frame finer than that draws the finest buckets' min-max envelope.
//
// Error contract: no function throws or fails; queries on an empty lane return nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "torchscope/gui/Lane.h"

namespace torchscope::gui {

struct CounterSample {
  Nanos ts_ns = 0;
  std::int64_t value = 0;
  friend bool operator==(const CounterSample&, const CounterSample&) = default;
};

// The samples taken in one bucket of 2^shift ns.
struct CounterBucket {
  std::int64_t bucket = 0;  // (ts - origin) >> shift
  Nanos first_ns = 0;       // its first sample
  Nanos last_ns = 0;        // its last sample
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::int64_t last = 0;    // the value at last_ns, held until the next bucket's first sample
  std::uint32_t count = 0;
};

struct CounterLevel {
  int shift = 0;
  std::vector<CounterBucket> buckets;  // non-empty buckets only, by bucket index
};

// One thing to draw: the values held over [x0, x1), one value (low == high) or the range of the
// samples folded into it.
struct CounterSpan {
  double x0 = 0;
  double x1 = 0;
  std::int64_t low = 0;
  std::int64_t high = 0;
};

// The value under a time: exact (low == high, the sample taken at ts_ns), or the range of the
// samples of a summarised lane's finest bucket there.
struct CounterValue {
  std::int64_t low = 0;
  std::int64_t high = 0;
  Nanos ts_ns = 0;
};

class CounterLane {
 public:
  CounterLane() = default;
  // An exact lane; `samples` must be sorted by time.
  explicit CounterLane(std::vector<CounterSample> samples);

  [[nodiscard]] bool exact() const { return exact_; }
  [[nodiscard]] const std::vector<CounterSample>& samples() const { return samples_; }  // exact lanes only
  [[nodiscard]] const std::vector<CounterLevel>& levels() const { return levels_; }     // finest first
  [[nodiscard]] std::size_t count() const { return count_; }
  [[nodiscard]] Nanos beginNs() const { return begin_ns_; }
  [[nodiscard]] Nanos endNs() const { return end_ns_; }
  [[nodiscard]] std::int64_t minValue() const { return min_; }
  [[nodiscard]] std::int64_t maxValue() const { return max_; }

  // Spans to draw for the frame, left to right, from the sample held when the frame begins to the
  // last sample in view: buckets of the coarsest level no wider than a pixel, or, zoomed in further,
  // the samples with those that fall in one pixel column folded into one span.
  void collect(const FrameScale& frame, std::vector<CounterSpan>& out) const;

  // The value held at t; nullopt before the first sample or after the last one.
  [[nodiscard]] std::optional<CounterValue> valueAt(Nanos t) const;

 private:
  friend class CounterLaneBuilder;

  void add(const CounterSample& sample);
  void buildLevelsFromSamples();
  void buildCoarserLevels();
  void collectFromLevel(const CounterLevel& level, const FrameScale& frame, std::vector<CounterSpan>& out) const;
  void collectSamples(const FrameScale& frame, std::vector<CounterSpan>& out) const;

  bool exact_ = true;
  std::vector<CounterSample> samples_;
  std::vector<CounterLevel> levels_;
  std::size_t count_ = 0;
  Nanos origin_ = 0;
  Nanos begin_ns_ = 0;
  Nanos end_ns_ = 0;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
};

// Builds a counter lane from samples that arrive in time order: exact while it holds at most
// `exact_limit` samples, summarised at buckets of 2^finest_shift ns from `origin` beyond that.
class CounterLaneBuilder {
 public:
  CounterLaneBuilder(Nanos origin, int finest_shift, std::size_t exact_limit);
  void add(const CounterSample& sample);
  [[nodiscard]] CounterLane finish();

 private:
  CounterLane lane_;
  std::size_t exact_limit_;
  CounterLevel finest_;
};

}  // namespace torchscope::gui
