// gpu/idle and gpu/launch-bound: how much of the steady state the GPU sat idle, and why.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "../MemoryFacts.h"
#include "../Rules.h"
#include "torchscope/analyzer/FixIds.h"
#include "torchscope/base/Saturating.h"

namespace torchscope::analyzer {

namespace {

constexpr double kIdleFraction = 0.2;        // below this the GPU is busy enough
constexpr double kLaunchBoundShare = 0.5;    // share of kernels shorter than their launch
constexpr std::int64_t kLaunchBoundKernels = 100;
constexpr std::int64_t kFewShapes = 3;       // CUDA graphs record one graph per shape
// Host waits this long on average are the host busy with other work (data, Python, I/O), not launch overhead,
// which costs microseconds per kernel: fusing kernels with torch.compile would not close them.
constexpr double kLongHostWaitSeconds = 1e-3;

struct GapSplit {
  double host_wait_s = 0;    // the launch was issued after the GPU had run dry
  std::int64_t host_waits = 0;
  double kernel_wait_s = 0;  // the launch was queued in time; the GPU waited on something else
  double unmatched_s = 0;    // no launch call recorded for the next kernel
};

// Looks up the launch call of the kernel after each large gap: one statement per process, its correlation ids bound
// as one JSON array (no statement text to parse per id).
Result<GapSplit> splitGaps(const store::Reader& reader, const std::vector<Gap>& gaps) {
  GapSplit split;
  std::map<std::int64_t, std::map<std::int64_t, base::Nanos>> launches;  // pid -> correlation -> launch start
  std::map<std::int64_t, std::set<std::int64_t>> wanted;
  for (const auto& gap : gaps) wanted[gap.pid].insert(gap.correlation_id);
  for (const auto& [pid, ids] : wanted) {
    auto done = reader.query(
        "SELECT j.value, (SELECT min(start_ns) FROM api_calls WHERE pid = ?1 AND correlation_id = j.value) "
        "FROM json_each(?2) j",
        [&, pid = pid](const store::Row& row) {
          if (!row.isNull(1)) launches[pid][row.integer(0)] = row.integer(1);
        },
        {pid, fmt::format("[{}]", fmt::join(ids, ","))});
    if (!done) return done.error();
  }
  for (const auto& gap : gaps) {
    const auto process = launches.find(gap.pid);
    const auto launch = process == launches.end() ? decltype(process->second)::const_iterator{}
                                                   : process->second.find(gap.correlation_id);
    if (process == launches.end() || launch == process->second.end()) {
      split.unmatched_s += gap.seconds;
    } else if (launch->second >= gap.previous_end_ns) {
      split.host_wait_s += gap.seconds;
      ++split.host_waits;
    } else {
      split.kernel_wait_s += gap.seconds;
    }
  }
  return split;
}

nlohmann::json devicesJson(const KernelWindow& window) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& device : window.devices) {
    devices.push_back({{"device", device.device}, {"kernels", device.kernels}, {"busy_seconds", device.busy_s},
                       {"idle_seconds", device.idle_s}});
  }
  return devices;
}

// The steady state's idle picture, shared by both rules.
struct IdlePicture {
  double window_s = 0;
  double idle_s = 0;  // per device that ran work in the window
  double idle_fraction = 0;
  GapSplit split;
  bool causes_known = false;  // some gap's next launch call was found
  double host_share = 0;      // of the classified gap time
  double steps = 1;
};

void reportIdle(const Facts& facts, const KernelWindow& scan, const IdlePicture& idle, std::vector<Finding>& out) {
  FixProposal fix{"", "look at the timeline around the largest gaps (torchscope gui): no launch call was recorded "
                      "for the work after them, so their cause is unknown"};
  std::string causes = "No launch call was recorded for the work after the gaps, so whether the host or earlier "
                       "work held the GPU back is unknown.";
  const double mean_host_wait_s =
      idle.split.host_waits > 0 ? idle.split.host_wait_s / static_cast<double>(idle.split.host_waits) : 0;
  if (idle.causes_known) {
    causes = fmt::format("Of the {} of gaps whose next launch call was recorded, {} waited on the host (the launch "
                         "came late) and {} on earlier work or a sync.",
                         formatSeconds(idle.split.host_wait_s + idle.split.kernel_wait_s), formatPercent(idle.host_share),
                         formatPercent(1 - idle.host_share));
    const bool host_bound = idle.host_share >= 0.5;
    if (host_bound && mean_host_wait_s >= kLongHostWaitSeconds) {
      causes += fmt::format(" The host waits last {} on average, far longer than a kernel launch: the host was busy "
                            "with other work.", formatSeconds(mean_host_wait_s));
      fix = {"", "look at what the host does between the kernels (data loading, CPU work, Python): the timeline "
                 "(torchscope gui) shows it"};
    } else if (host_bound && !facts.compiled) {
      fix = {fix::kTorchCompile, "compile the model with torch.compile so that fewer, larger kernels are launched"};
    } else if (host_bound) {
      fix = {"", "the host is too slow to feed the GPU: look at data loading, syncs and Python overhead in the step"};
    } else {
      fix = {"", "the GPU mostly waits on work it depends on: look at the sync/* findings"};
    }
  }
  const bool steps = !facts.steady_step_seconds.empty();
  const std::size_t devices = scan.devices.size();
  Finding finding = makeFinding(
      "gpu/idle", idle.idle_fraction >= 0.5 ? Severity::kError : Severity::kWarning,
      fmt::format("GPU idle {} of the {}", formatPercent(idle.idle_fraction), steps ? "steady state" : "run"),
      fmt::format("{} the GPU{} ran no kernel, copy or memset for {} of {}{}. {}",
                  steps ? "In the steady state" : "Over the run (no steps were recorded)",
                  devices > 1 ? fmt::format("s (mean of the {} devices that ran work)", devices) : "",
                  formatSeconds(idle.idle_s), formatSeconds(idle.window_s),
                  steps ? fmt::format(" ({} per step)", formatSeconds(idle.idle_s / idle.steps)) : "", causes),
      fix);
  finding.count = static_cast<std::int64_t>(idle.steps);
  setImpact(finding, facts, idle.idle_s);
  const double classified = idle.split.host_wait_s + idle.split.kernel_wait_s;
  setEvidence(finding, {{"idle_fraction", idle.idle_fraction},
                        {"idle_seconds", idle.idle_s},
                        {"idle_seconds_per_step", idle.idle_s / idle.steps},
                        {"window_seconds", idle.window_s},
                        {"gap_causes_known", idle.causes_known},
                        {"host_wait_fraction", idle.host_share},
                        {"host_wait_seconds", idle.idle_s * idle.host_share},
                        {"kernel_wait_seconds", idle.causes_known ? idle.idle_s * (1 - idle.host_share) : 0.0},
                        {"mean_host_wait_seconds", mean_host_wait_s},
                        {"classified_gap_seconds", classified},
                        {"unmatched_gap_seconds", idle.split.unmatched_s},
                        {"kernels", scan.kernels},
                        {"devices", devicesJson(scan)}});
  out.push_back(std::move(finding));
}

// What CUDA graphs would cost in memory: each recorded graph keeps a private pool of about the step's
// transient memory, one graph per shape seen. The sentence for the message; evidence gets the figures.
std::string cudaGraphMemoryCost(const Context& context, std::int64_t shapes, nlohmann::json& evidence) {
  std::optional<std::int64_t> pool;
  if (context.facts.count("memory_samples") > 0) {
    if (auto memory = collectMemoryFacts(context.reader)) {
      for (const std::int64_t device : memory->cudaDevices()) {
        if (auto estimate = cudaGraphPoolEstimate(*memory, device))
          pool = base::saturatingAdd(pool.value_or(0), *estimate);
      }
    }
  }
  if (!pool) {
    return " What they cost in GPU memory is unknown: the run has no CUDA allocator figures.";
  }
  evidence["cuda_graph_pool_bytes"] = *pool;
  const std::int64_t graphs_bytes = base::saturatingMul(*pool, shapes);
  evidence["cuda_graph_memory_bytes"] = graphs_bytes;
  return fmt::format(" Each recorded graph keeps a private memory pool of about the step's transient memory ({}), so "
                     "{} shape(s) cost about {} more GPU memory.",
                     formatBytes(static_cast<double>(*pool)), shapes, formatBytes(static_cast<double>(graphs_bytes)));
}

void reportLaunchBound(const Context& context, const KernelWindow& scan, const IdlePicture& idle,
                       std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  const LaunchCost& launch = facts.launch;
  const double short_share = static_cast<double>(scan.short_kernels) / static_cast<double>(scan.kernels);
  const std::int64_t shapes = distinctShapes(facts);
  const bool few_shapes = shapes <= kFewShapes;
  FixProposal fix;
  std::string advice;
  nlohmann::json memory_evidence = nlohmann::json::object();
  if (few_shapes && facts.compiled) {
    fix = {fix::kCompileMode, "torch.compile(model, mode=\"reduce-overhead\") replays the step as a CUDA graph"};
    advice = fmt::format("The run showed {} distinct input shape(s), so CUDA graphs fit.", shapes) +
             cudaGraphMemoryCost(context, shapes, memory_evidence);
  } else if (few_shapes) {
    fix = {fix::kCudaGraphs, "capture the step in a CUDA graph (torch.cuda.graphs) and replay it"};
    advice = fmt::format("The run showed {} distinct input shape(s), so CUDA graphs fit.", shapes) +
             cudaGraphMemoryCost(context, shapes, memory_evidence);
  } else {
    fix = facts.compiled ? FixProposal{"", "fuse more work per kernel (bigger batches, fewer small ops)"}
                         : FixProposal{fix::kTorchCompile, "torch.compile fuses small ops into fewer kernels"};
    advice = fmt::format("CUDA graphs are not advised: the run showed {} distinct input shapes, and each would "
                         "record its own graph (memory and recording time).", shapes);
  }
  const std::string waits =
      idle.causes_known ? fmt::format(" {} of the GPU's idle time waited on late launches.",
                                      formatSeconds(idle.idle_s * idle.host_share))
                        : std::string();
  // At most the idle time spent waiting on launches (all of it when the causes are unknown) can be won back.
  const double host_wait_s = idle.causes_known ? idle.idle_s * idle.host_share : idle.idle_s;
  const double saving = std::min(host_wait_s, static_cast<double>(scan.short_kernels) * launch.mean_s - scan.short_kernel_s);
  Finding finding = makeFinding(
      "gpu/launch-bound", Severity::kWarning,
      fmt::format("{} of kernels are shorter than their launch", formatPercent(short_share)),
      fmt::format("{} of {} kernels ran shorter than the {} a launch call takes on the host (mean of {} sampled "
                  "launches), so the host cannot issue them as fast as the GPU runs them.{} {}",
                  scan.short_kernels, scan.kernels, formatSeconds(launch.mean_s), launch.launches, waits, advice),
      fix);
  finding.count = scan.short_kernels;
  setImpact(finding, facts, std::max(0.0, saving));
  nlohmann::json evidence = {{"kernels", scan.kernels},
                             {"short_kernels", scan.short_kernels},
                             {"short_kernel_share", short_share},
                             {"mean_launch_seconds", launch.mean_s},
                             {"sampled_launches", launch.launches},
                             {"distinct_shapes", shapes},
                             {"cuda_graphs_advised", few_shapes},
                             {"idle_fraction", idle.idle_fraction}};
  evidence.update(memory_evidence);
  setEvidence(finding, evidence);
  out.push_back(std::move(finding));
}

}  // namespace

Result<void> gpuRules(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  const KernelWindow& scan = facts.kernel_window;
  if (facts.count("kernels") == 0 || scan.end_ns <= scan.begin_ns || scan.kernels == 0) return {};

  IdlePicture idle;
  idle.window_s = toSeconds(static_cast<double>(base::spanNanos(scan.begin_ns, scan.end_ns)));
  // Idle time per device that ran work in the window: devices a trace lists but never used do not dilute it.
  idle.idle_s = scan.idle_s / static_cast<double>(std::max<std::size_t>(1, scan.devices.size()));
  idle.idle_fraction = std::clamp(idle.idle_s / idle.window_s, 0.0, 1.0);
  auto split = splitGaps(context.reader, scan.largest_gaps);
  if (!split) return split.error();
  idle.split = *split;
  const double classified = split->host_wait_s + split->kernel_wait_s;
  idle.causes_known = classified > 0;
  idle.host_share = idle.causes_known ? split->host_wait_s / classified : 0;
  idle.steps = static_cast<double>(std::max<std::size_t>(1, facts.steady_step_seconds.size()));

  if (idle.idle_fraction >= kIdleFraction) reportIdle(facts, scan, idle, out);
  const double short_share = static_cast<double>(scan.short_kernels) / static_cast<double>(scan.kernels);
  if (facts.launch.launches > 0 && scan.kernels >= kLaunchBoundKernels && short_share >= kLaunchBoundShare &&
      idle.idle_fraction >= kIdleFraction / 2) {
    reportLaunchBound(context, scan, idle, out);
  }
  return {};
}

}  // namespace torchscope::analyzer
