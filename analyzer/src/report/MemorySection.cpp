// The memory summary of a run as table rows, shared by the Markdown and HTML reports.
#include <fmt/format.h>

#include "Reports.h"

namespace torchscope::analyzer::report {

namespace {

std::string bytesOrDash(std::int64_t bytes) { return bytes < 0 ? "-" : formatBytes(static_cast<double>(bytes)); }

std::string growthText(double bytes_per_step) {
  return bytes_per_step > 0 ? "+" + formatBytes(bytes_per_step) : "none";
}

}  // namespace

std::vector<MemoryRow> memoryRows(const MemorySummary& memory) {
  std::vector<MemoryRow> rows;
  if (!memory.recorded) return rows;
  if (memory.peak_rss_bytes >= 0 || memory.last_step_rss_bytes >= 0) {
    rows.push_back({"host RSS", bytesOrDash(memory.peak_rss_bytes), bytesOrDash(memory.last_step_rss_bytes),
                    memory.last_step_rss_bytes >= 0 ? growthText(memory.rss_growth_bytes_per_step) : "-"});
  }
  for (const auto& gpu : memory.devices) {
    rows.push_back({fmt::format("GPU {} allocated", gpu.device), bytesOrDash(gpu.peak_allocated_bytes),
                    bytesOrDash(gpu.last_step_allocated_bytes),
                    gpu.last_step_allocated_bytes >= 0 ? growthText(gpu.allocated_growth_bytes_per_step) : "-"});
    rows.push_back({fmt::format("GPU {} reserved", gpu.device), bytesOrDash(gpu.peak_reserved_bytes),
                    bytesOrDash(gpu.last_step_reserved_bytes), "-"});
  }
  return rows;
}

}  // namespace torchscope::analyzer::report
