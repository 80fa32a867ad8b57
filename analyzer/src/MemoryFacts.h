// Memory figures of a store, read once for the memory rules, the CUDA-graph advice and `stats`:
// the step-end values of each memory_samples series and the leak evidence (docs/FORMAT.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/base/Result.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/Records.h"

namespace torchscope::analyzer {

// One series of one device at the step ends, in step order.
struct StepSeries {
  std::vector<std::int64_t> steps;
  std::vector<std::int64_t> values;
  [[nodiscard]] bool empty() const { return values.empty(); }
  [[nodiscard]] std::int64_t max() const;
  // The step of the highest value (the first one reaching it); -1 when empty.
  [[nodiscard]] std::int64_t stepOfMax() const;
};

// A least-squares line through (step, value) over the steps from `first_step` on.
struct Growth {
  double per_step = 0;      // value units per step
  std::int64_t first_step = -1;
  std::int64_t last_step = -1;
  std::int64_t points = 0;
  double rising_share = 0;  // share of step-to-step changes that are not decreases
};

struct MemoryFacts {
  // (series, device) -> its step-end values.
  std::map<std::pair<std::string, std::int64_t>, StepSeries> step_series;
  // Largest value of each (series, device) over all samples, step ends or not.
  std::map<std::pair<std::string, std::int64_t>, std::int64_t> maxima;
  std::vector<store::MemoryHolder> holders;  // latest row per (file, line, name)
  std::map<std::int64_t, std::int64_t> device_memory;  // device -> total bytes (devices table)

  [[nodiscard]] bool empty() const { return maxima.empty() && holders.empty(); }
  [[nodiscard]] const StepSeries* series(const std::string& name, std::int64_t device = -1) const;
  [[nodiscard]] std::optional<std::int64_t> maximum(const std::string& name, std::int64_t device = -1) const;
  // GPUs with allocator figures.
  [[nodiscard]] std::vector<std::int64_t> cudaDevices() const;
};

[[nodiscard]] Result<MemoryFacts> collectMemoryFacts(const store::Reader& reader);

// The growth of a series from `first_step` on; nullopt with fewer than 4 points.
[[nodiscard]] std::optional<Growth> growthOf(const StepSeries& series, std::int64_t first_step);

// The run's memory for its summary; `first_steady_step` bounds the growth fit.
[[nodiscard]] MemorySummary summarizeMemory(const MemoryFacts& memory, std::int64_t first_steady_step);

// What each CUDA graph would keep on a device: the step's transient memory, the highest allocated
// minus the median allocated at step ends (each recorded graph keeps a private pool of about that
// size); nullopt without allocator figures.
[[nodiscard]] std::optional<std::int64_t> cudaGraphPoolEstimate(const MemoryFacts& memory, std::int64_t device);

}  // namespace torchscope::analyzer
