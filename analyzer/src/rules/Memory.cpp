// memory/growth, memory/allocator-churn, memory/fragmentation, memory/peak-near-capacity: what the job
// holds, from memory_samples (host RSS, CUDA allocator figures at step ends), the bridge's leak evidence
// (memory_holders) and, for the phase of a peak, profiler memory events with their ops.
#include <fmt/format.h>

#include <algorithm>

#include "../MemoryFacts.h"
#include "../Rules.h"
#include "../Stats.h"
#include "torchscope/analyzer/FixIds.h"
#include "torchscope/base/Saturating.h"

namespace torchscope::analyzer {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;
// Growth without a named holder must be large and steady to be worth a finding.
constexpr double kUnexplainedGrowthBytes = 64 * kMiB;
constexpr double kUnexplainedGrowthShare = 0.10;  // of the first steady value
constexpr double kSteadyRisingShare = 0.7;
constexpr double kFragmentedRatio = 1.5;        // reserved / allocated
constexpr double kFragmentedBytes = 1 * kGiB;   // reserved - allocated
constexpr double kNearCapacity = 0.9;

std::string deviceName(std::int64_t device) { return device < 0 ? "host" : fmt::format("GPU {}", device); }

// Growth of a series over the steady steps, positive only.
std::optional<Growth> steadyGrowth(const MemoryFacts& memory, const Facts& facts, const std::string& series,
                                   std::int64_t device) {
  const StepSeries* values = memory.series(series, device);
  if (values == nullptr) return std::nullopt;
  auto growth = growthOf(*values, firstSteadyStep(facts));
  if (!growth || growth->per_step <= 0) return std::nullopt;
  return growth;
}

void reportHolder(const store::MemoryHolder& holder, const std::optional<Growth>& host, std::vector<Finding>& out) {
  const bool graph = holder.kind == "autograd-graph";
  const std::int64_t steps = std::max<std::int64_t>(1, base::saturatingSub(holder.step, holder.first_step));
  const double size_per_step =
      static_cast<double>(base::saturatingSub(holder.size_after, holder.size_before)) / static_cast<double>(steps);
  const std::string where = formatLocation(holder.file, holder.line);
  const std::string rss = host ? fmt::format(" Host memory grew {} per step over steps {}-{}.",
                                             formatBytes(host->per_step), host->first_step, host->last_step)
                               : std::string();
  std::string title;
  std::string message;
  FixProposal fix;
  if (graph) {
    title = fmt::format("`{}` keeps the autograd graph of every step", holder.name);
    message = fmt::format(
        "`{}` ({}) is a tensor with an autograd graph that grew from {} to {} nodes between steps {} and {} "
        "({:.0f} nodes per step): adding a loss to it keeps that step's graph, and the tensors the graph saved, "
        "alive for the rest of the run.{} Add the number, not the tensor: `{} += loss.item()` (or "
        "`loss.detach()` to stay on the device).",
        holder.name, where, holder.size_before, holder.size_after, holder.first_step, holder.step, size_per_step, rss,
        holder.name);
    fix = {"", fmt::format("accumulate `loss.item()` or `loss.detach()` into `{}` at {}", holder.name, where)};
  } else {
    const std::string held = holder.bytes >= 0 ? fmt::format(", {} of tensors", formatBytes(static_cast<double>(holder.bytes)))
                                                : std::string();
    title = fmt::format("`{}` keeps tensors from every step", holder.name);
    message = fmt::format(
        "`{}` ({}) grew from {} to {} tensors between steps {} and {} ({:.1f} per step{}): each step's tensors, "
        "and the autograd graph of any that require grad, stay alive.{} Keep only what is needed: append "
        "`.detach()` tensors (`.item()` for a figure, `.cpu()` to free the device), or clear `{}` each epoch.",
        holder.name, where, holder.size_before, holder.size_after, holder.first_step, holder.step, size_per_step, held,
        rss, holder.name);
    fix = {"", fmt::format("store `.detach()`ed tensors or `.item()` figures in `{}`, or clear it", holder.name)};
  }
  Finding finding = makeFinding("memory/growth", Severity::kWarning, std::move(title), std::move(message), fix);
  finding.file = holder.file;
  finding.line = holder.line;
  finding.function = holder.function;
  nlohmann::json evidence = {{"holder", holder.name},
                             {"kind", holder.kind},
                             {"first_step", holder.first_step},
                             {"step", holder.step},
                             {"size_before", holder.size_before},
                             {"size_after", holder.size_after},
                             {"size_per_step", size_per_step},
                             {"holder_bytes", holder.bytes}};
  if (host) evidence["host_rss_growth_bytes_per_step"] = host->per_step;
  setEvidence(finding, evidence);
  out.push_back(std::move(finding));
}

// Growth that no holder explains: reported only when large and steady.
void reportUnexplainedGrowth(const Facts& facts, const MemoryFacts& memory, const std::string& series,
                             std::int64_t device, std::vector<Finding>& out) {
  const auto growth = steadyGrowth(memory, facts, series, device);
  if (!growth) return;
  const StepSeries& values = *memory.series(series, device);
  const double total =
      growth->per_step * static_cast<double>(base::saturatingSub(growth->last_step, growth->first_step));
  const double first = static_cast<double>(values.values.front());
  if (total < kUnexplainedGrowthBytes || total < kUnexplainedGrowthShare * first ||
      growth->rising_share < kSteadyRisingShare) {
    return;
  }
  Finding finding = makeFinding(
      "memory/growth", Severity::kWarning,
      fmt::format("{} memory grows by {} per step", deviceName(device), formatBytes(growth->per_step)),
      fmt::format("{} ({}) grew by {} per step over steps {}-{} ({} in all) and did not come back. No variable of "
                  "the user's frames on the stack held a growing tensor graph or list of tensors, so the memory is "
                  "kept elsewhere: a cache, a global, a C extension or the allocator. To see who allocates it, run a "
                  "few steps under tracemalloc (host) or torch.cuda.memory._record_memory_history (GPU).",
                  deviceName(device), series, formatBytes(growth->per_step), growth->first_step, growth->last_step,
                  formatBytes(total)),
      {"", "find what keeps the memory: tracemalloc snapshots or torch.cuda.memory._record_memory_history"});
  setEvidence(finding, {{"series", series},
                        {"device", device},
                        {"bytes_per_step", growth->per_step},
                        {"first_step", growth->first_step},
                        {"last_step", growth->last_step},
                        {"rising_share", growth->rising_share}});
  out.push_back(std::move(finding));
}

// Counter series: how much it rose over the steady steps.
std::int64_t steadyIncrease(const MemoryFacts& memory, const Facts& facts, const std::string& series,
                            std::int64_t device) {
  const StepSeries* values = memory.series(series, device);
  if (values == nullptr) return 0;
  const std::int64_t first_step = firstSteadyStep(facts);
  std::optional<std::int64_t> first;
  std::int64_t last = 0;
  for (std::size_t i = 0; i < values->values.size(); ++i) {
    if (values->steps[i] < first_step) continue;
    if (!first) first = values->values[i];
    last = values->values[i];
  }
  return first ? base::saturatingSub(last, *first) : 0;
}

void reportChurn(const Facts& facts, const MemoryFacts& memory, std::int64_t device, std::vector<Finding>& out) {
  const std::int64_t retries = steadyIncrease(memory, facts, "cuda.alloc_retries_count", device);
  const std::int64_t mallocs = steadyIncrease(memory, facts, "cuda.device_allocs_count", device);
  const std::int64_t frees = steadyIncrease(memory, facts, "cuda.device_frees_count", device);
  const StepSeries* counts = memory.series("cuda.device_allocs_count", device);
  const std::int64_t steady_steps =
      counts == nullptr ? 0 : base::saturatingSub(counts->steps.back(), firstSteadyStep(facts));
  if (steady_steps <= 0 || (retries == 0 && mallocs < steady_steps)) return;
  Finding finding = makeFinding(
      "memory/allocator-churn", retries > 0 ? Severity::kWarning : Severity::kInfo,
      fmt::format("GPU {}: the caching allocator keeps calling cudaMalloc after warm-up", device),
      fmt::format("Over {} steady-state steps the CUDA caching allocator on GPU {} called cudaMalloc {} times and "
                  "cudaFree {} times{}. A warm allocator reuses its cached blocks; each call to the driver "
                  "synchronises and a retry first frees the whole cache. What helps: "
                  "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, stable tensor shapes (pad or bucket the "
                  "batches), and no torch.cuda.empty_cache() inside the loop.",
                  steady_steps, device, mallocs, frees,
                  retries > 0
                      ? fmt::format(", and {} allocations failed and were retried after freeing the cache", retries)
                      : std::string()),
      {"", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; keep shapes stable"});
  finding.count = base::saturatingAdd(mallocs, retries);
  setEvidence(finding, {{"device", device},
                        {"steady_steps", steady_steps},
                        {"device_allocs", mallocs},
                        {"device_frees", frees},
                        {"alloc_retries", retries}});
  out.push_back(std::move(finding));
}

void reportFragmentation(const Facts& facts, const MemoryFacts& memory, std::int64_t device, std::vector<Finding>& out) {
  const StepSeries* allocated = memory.series("cuda.allocated", device);
  const StepSeries* reserved = memory.series("cuda.reserved", device);
  if (allocated == nullptr || reserved == nullptr || allocated->values.size() != reserved->values.size()) return;
  const std::int64_t first_step = firstSteadyStep(facts);
  std::vector<double> slack;
  std::vector<double> ratio;
  for (std::size_t i = 0; i < allocated->values.size(); ++i) {
    if (allocated->steps[i] < first_step || allocated->values[i] <= 0) continue;
    slack.push_back(static_cast<double>(base::saturatingSub(reserved->values[i], allocated->values[i])));
    ratio.push_back(static_cast<double>(reserved->values[i]) / static_cast<double>(allocated->values[i]));
  }
  if (slack.empty()) return;
  const double median_slack = median(slack);
  const double median_ratio = median(ratio);
  if (median_slack < kFragmentedBytes || median_ratio < kFragmentedRatio) return;
  Finding finding = makeFinding(
      "memory/fragmentation", Severity::kWarning,
      fmt::format("GPU {}: the allocator reserves {:.1f}x what the tensors use", device, median_ratio),
      fmt::format("At the steady-state step ends GPU {} had {} reserved by the caching allocator above the {} its "
                  "tensors used (median). The gap is cached blocks split into pieces too small for the next "
                  "requests: it counts against the device's memory and leads to out-of-memory errors with memory "
                  "nominally free. PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets segments grow instead of "
                  "splitting; stable shapes help too.",
                  device, formatBytes(median_slack),
                  formatBytes(median(std::vector<double>(allocated->values.begin(), allocated->values.end())))),
      {"", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"});
  setEvidence(finding, {{"device", device}, {"median_reserved_minus_allocated", median_slack},
                        {"median_reserved_over_allocated", median_ratio}});
  out.push_back(std::move(finding));
}

// The op that was running when the device's allocated total peaked (profiler memory events), "" unknown.
std::string peakPhase(const store::Reader& reader, std::int64_t device) {
  std::int64_t peak_ns = -1;
  (void)reader.query("SELECT ts_ns FROM memory_events WHERE device = ? AND total_allocated >= 0 "
                     "ORDER BY total_allocated DESC, ts_ns LIMIT 1",
                     [&](const store::Row& row) { peak_ns = row.integer(0); }, {device});
  if (peak_ns < 0) return "";
  std::string op;
  (void)reader.query("SELECT name FROM cpu_ops_v WHERE start_ns <= ?1 AND end_ns >= ?1 AND category = 'cpu_op' "
                     "ORDER BY start_ns DESC LIMIT 1",
                     [&](const store::Row& row) { op = row.text(0); }, {peak_ns});
  return op;
}

void reportNearCapacity(const Context& context, const MemoryFacts& memory, std::int64_t device,
                        std::vector<Finding>& out) {
  const auto capacity = memory.device_memory.find(device);
  if (capacity == memory.device_memory.end() || capacity->second <= 0) return;
  const std::int64_t peak = std::max(memory.maximum("cuda.peak_reserved", device).value_or(0),
                                     memory.maximum("cuda.reserved", device).value_or(0));
  const std::int64_t ooms = memory.maximum("cuda.ooms_count", device).value_or(0);
  const double share = static_cast<double>(peak) / static_cast<double>(capacity->second);
  if (share < kNearCapacity && ooms == 0) return;
  const StepSeries* peaks = memory.series("cuda.peak_reserved", device);
  const std::int64_t peak_step = peaks != nullptr ? peaks->stepOfMax() : -1;
  const std::string phase = peakPhase(context.reader, device);
  Finding finding = makeFinding(
      "memory/peak-near-capacity", ooms > 0 ? Severity::kError : Severity::kWarning,
      fmt::format("GPU {} peaks at {} of its memory", device, formatPercent(share)),
      fmt::format("The caching allocator on GPU {} reserved up to {} of {}{}{}{}. A larger batch, another shape or "
                  "a fix that costs memory will not fit. What lowers the peak: activation checkpointing "
                  "(torch.utils.checkpoint) of the largest layers, AMP (torch.autocast with bf16/fp16), smaller "
                  "micro-batches with gradient accumulation.",
                  device, formatBytes(static_cast<double>(peak)), formatBytes(static_cast<double>(capacity->second)),
                  peak_step >= 0 ? fmt::format(", first reached in step {}", peak_step) : std::string(),
                  phase.empty() ? std::string() : fmt::format(", while {} ran", phase),
                  ooms > 0 ? fmt::format("; {} allocations ran out of memory", ooms) : std::string()),
      {fix::kBf16Autocast, "torch.autocast(dtype=torch.bfloat16) for the forward pass; checkpoint the largest layers"});
  setEvidence(finding, {{"device", device}, {"peak_reserved", peak}, {"capacity", capacity->second},
                        {"share", share}, {"step", peak_step}, {"op", phase}, {"ooms", ooms}});
  out.push_back(std::move(finding));
}

}  // namespace

Result<void> memoryRules(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  if (facts.count("memory_samples") == 0 && facts.count("memory_holders") == 0) return {};
  auto memory = collectMemoryFacts(context.reader);
  if (!memory) return memory.error();
  const auto host = steadyGrowth(*memory, facts, "host.rss", -1);
  for (const auto& holder : memory->holders) reportHolder(holder, host, out);
  if (memory->holders.empty()) reportUnexplainedGrowth(facts, *memory, "host.rss", -1, out);
  for (const std::int64_t device : memory->cudaDevices()) {
    if (memory->holders.empty()) reportUnexplainedGrowth(facts, *memory, "cuda.allocated", device, out);
    reportChurn(facts, *memory, device, out);
    reportFragmentation(facts, *memory, device, out);
    reportNearCapacity(context, *memory, device, out);
  }
  return {};
}

}  // namespace torchscope::analyzer
