#include "MemoryFacts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "Stats.h"
#include "torchscope/base/Saturating.h"

namespace torchscope::analyzer {

std::int64_t StepSeries::max() const { return values.empty() ? 0 : *std::max_element(values.begin(), values.end()); }

std::int64_t StepSeries::stepOfMax() const {
  if (values.empty()) return -1;
  return steps[static_cast<std::size_t>(std::max_element(values.begin(), values.end()) - values.begin())];
}

const StepSeries* MemoryFacts::series(const std::string& name, std::int64_t device) const {
  const auto it = step_series.find({name, device});
  return it == step_series.end() ? nullptr : &it->second;
}

std::optional<std::int64_t> MemoryFacts::maximum(const std::string& name, std::int64_t device) const {
  const auto it = maxima.find({name, device});
  if (it == maxima.end()) return std::nullopt;
  return it->second;
}

std::vector<std::int64_t> MemoryFacts::cudaDevices() const {
  std::vector<std::int64_t> devices;
  for (const auto& [key, value] : maxima) {
    if (key.first == "cuda.allocated" && key.second >= 0) devices.push_back(key.second);
  }
  return devices;
}

Result<MemoryFacts> collectMemoryFacts(const store::Reader& reader) {
  MemoryFacts memory;
  auto done = reader.query(
      "SELECT series, device, step, value FROM memory_samples WHERE step >= 0 ORDER BY series, device, step, ts_ns",
      [&](const store::Row& row) {
        StepSeries& series = memory.step_series[{row.text(0), row.integer(1)}];
        series.steps.push_back(row.integer(2));
        series.values.push_back(row.integer(3));
      });
  if (!done) return done.error();
  done = reader.query("SELECT series, device, max(value) FROM memory_samples GROUP BY series, device",
                      [&](const store::Row& row) { memory.maxima[{row.text(0), row.integer(1)}] = row.integer(2); });
  if (!done) return done.error();
  auto holders = reader.load<store::MemoryHolder>();
  if (!holders) return holders.error();
  // The bridge reports a holder again as it keeps growing: keep its latest row.
  std::map<std::tuple<std::string, std::int64_t, std::string>, store::MemoryHolder> latest;
  for (auto& holder : *holders) latest[{holder.file, holder.line, holder.name}] = std::move(holder);
  for (auto& [key, holder] : latest) memory.holders.push_back(std::move(holder));
  auto devices = reader.load<store::Device>();
  if (!devices) return devices.error();
  for (const auto& device : *devices) memory.device_memory[device.device] = device.total_memory_bytes;
  return memory;
}

std::optional<Growth> growthOf(const StepSeries& series, std::int64_t first_step) {
  std::vector<double> x;
  std::vector<double> y;
  Growth growth;
  for (std::size_t i = 0; i < series.values.size(); ++i) {
    if (series.steps[i] < first_step) continue;
    if (x.empty()) growth.first_step = series.steps[i];
    growth.last_step = series.steps[i];
    x.push_back(static_cast<double>(series.steps[i]));
    y.push_back(static_cast<double>(series.values[i]));
  }
  if (x.size() < 4) return std::nullopt;
  const double n = static_cast<double>(x.size());
  double mean_x = 0;
  double mean_y = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mean_x += x[i] / n;
    mean_y += y[i] / n;
  }
  double covariance = 0;
  double variance = 0;
  std::int64_t rising = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    covariance += (x[i] - mean_x) * (y[i] - mean_y);
    variance += (x[i] - mean_x) * (x[i] - mean_x);
    if (i > 0 && y[i] >= y[i - 1]) ++rising;
  }
  growth.per_step = variance > 0 ? covariance / variance : 0;
  growth.points = static_cast<std::int64_t>(x.size());
  growth.rising_share = static_cast<double>(rising) / (n - 1);
  return growth;
}

std::optional<std::int64_t> cudaGraphPoolEstimate(const MemoryFacts& memory, std::int64_t device) {
  const StepSeries* allocated = memory.series("cuda.allocated", device);
  const auto peak = memory.maximum("cuda.peak_allocated", device);
  if (allocated == nullptr || allocated->empty() || !peak) return std::nullopt;
  std::vector<double> values(allocated->values.begin(), allocated->values.end());
  return std::max<std::int64_t>(0, base::saturatingSub(*peak, base::saturatingCast(median(values))));
}

MemorySummary summarizeMemory(const MemoryFacts& memory, std::int64_t first_steady_step) {
  MemorySummary summary;
  summary.recorded = !memory.maxima.empty();
  summary.peak_rss_bytes = memory.maximum("host.hwm").value_or(std::max(memory.maximum("host.rss").value_or(-1),
                                                                         memory.maximum("host.rss_peak").value_or(-1)));
  if (const StepSeries* rss = memory.series("host.rss"); rss != nullptr && !rss->empty()) {
    summary.last_step_rss_bytes = rss->values.back();
    const auto growth = growthOf(*rss, first_steady_step);
    if (growth && growth->per_step > 0) summary.rss_growth_bytes_per_step = growth->per_step;
  }
  for (const char* series : {"host.rss_peak", "host.rss"}) {
    const StepSeries* values = memory.series(series);
    if (values == nullptr || values->empty()) continue;
    summary.peak_rss_step = values->stepOfMax();
    break;
  }
  const auto lastValue = [&](const char* series, std::int64_t device) {
    const StepSeries* values = memory.series(series, device);
    return values == nullptr || values->empty() ? std::int64_t{-1} : values->values.back();
  };
  for (const std::int64_t device : memory.cudaDevices()) {
    DeviceMemorySummary gpu;
    gpu.device = device;
    gpu.peak_allocated_bytes = std::max(memory.maximum("cuda.peak_allocated", device).value_or(-1),
                                        memory.maximum("cuda.allocated", device).value_or(-1));
    gpu.peak_reserved_bytes = std::max(memory.maximum("cuda.peak_reserved", device).value_or(-1),
                                       memory.maximum("cuda.reserved", device).value_or(-1));
    gpu.last_step_allocated_bytes = lastValue("cuda.allocated", device);
    gpu.last_step_reserved_bytes = lastValue("cuda.reserved", device);
    if (const StepSeries* allocated = memory.series("cuda.allocated", device); allocated != nullptr) {
      const auto growth = growthOf(*allocated, first_steady_step);
      if (growth && growth->per_step > 0) gpu.allocated_growth_bytes_per_step = growth->per_step;
    }
    summary.devices.push_back(gpu);
  }
  return summary;
}

std::string formatBytes(double bytes) {
  const double magnitude = std::fabs(bytes);
  if (magnitude >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024 * 1024));
  if (magnitude >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024));
  if (magnitude >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

}  // namespace torchscope::analyzer
