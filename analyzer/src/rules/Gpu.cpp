// gpu/idle and gpu/launch-bound: how much of the steady state the GPU sat idle, and why.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "../Rules.h"
#include "torchscope/analyzer/FixIds.h"

namespace torchscope::analyzer {

namespace {

constexpr double kIdleFraction = 0.2;        // below this the GPU is busy enough
constexpr double kLaunchBoundShare = 0.5;    // share of kernels shorter than their launch
constexpr std::int64_t kLaunchBoundKernels = 100;
constexpr std::int64_t kFewShapes = 3;       // CUDA graphs record one graph per shape

struct GapSplit {
  double host_wait_s = 0;    // the launch was issued after the GPU had run dry
  double kernel_wait_s = 0;  // the launch was queued in time; the GPU waited on something else
  double unmatched_s = 0;    // no launch call recorded for the next kernel
};

// Looks up the launch call of the kernel after each large gap, in chunks of literal ids per process.
Result<GapSplit> splitGaps(const store::Reader& reader, const std::vector<Gap>& gaps) {
  GapSplit split;
  std::map<std::int64_t, std::map<std::int64_t, store::Nanos>> launches;  // pid -> correlation -> launch start
  std::map<std::int64_t, std::vector<std::int64_t>> wanted;
  for (const auto& gap : gaps) wanted[gap.pid].push_back(gap.correlation_id);
  for (auto& [pid, ids] : wanted) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (std::size_t begin = 0; begin < ids.size(); begin += 500) {
      std::string list;
      for (std::size_t i = begin; i < std::min(ids.size(), begin + 500); ++i) {
        list += (list.empty() ? "" : ",") + std::to_string(ids[i]);
      }
      auto done = reader.query(
          fmt::format("SELECT correlation_id, min(start_ns) FROM api_calls WHERE pid = ? AND correlation_id IN ({}) "
                      "GROUP BY correlation_id", list),
          [&, pid = pid](const store::Row& row) { launches[pid][row.integer(0)] = row.integer(1); }, {pid});
      if (!done) return done.error();
    }
  }
  for (const auto& gap : gaps) {
    const auto process = launches.find(gap.pid);
    const auto launch = process == launches.end() ? decltype(process->second)::const_iterator{}
                                                   : process->second.find(gap.correlation_id);
    if (process == launches.end() || launch == process->second.end()) {
      split.unmatched_s += gap.seconds;
    } else if (launch->second >= gap.previous_end_ns) {
      split.host_wait_s += gap.seconds;
    } else {
      split.kernel_wait_s += gap.seconds;
    }
  }
  return split;
}

}  // namespace

Result<void> gpuRules(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  if (facts.count("kernels") == 0 || facts.steady_end_ns <= facts.steady_begin_ns) return {};
  const LaunchCost* launch = &facts.launch;
  const KernelWindow* scan = &facts.kernel_window;
  if (scan->kernels == 0) return {};

  const double window_s = toSeconds(static_cast<double>(facts.steady_end_ns - facts.steady_begin_ns));
  const double device_count = static_cast<double>(std::max<std::size_t>(1, facts.compute_major.size()));
  const double idle_s = scan->idle_s / device_count;
  const double idle_fraction = std::clamp(idle_s / window_s, 0.0, 1.0);
  auto split = splitGaps(context.reader, scan->largest_gaps);
  if (!split) return split.error();
  const double classified = split->host_wait_s + split->kernel_wait_s;
  const double host_share = classified > 0 ? split->host_wait_s / classified : 0.5;
  const double steps = static_cast<double>(std::max<std::size_t>(1, facts.steady_step_seconds.size()));
  const std::int64_t shapes = distinctShapes(facts);

  if (idle_fraction >= kIdleFraction) {
    const bool host_bound = host_share >= 0.5;
    FixProposal fix{"", "the GPU mostly waits on kernels it depends on: look at the sync/* findings"};
    if (host_bound && !facts.compiled) {
      fix = {fix::kTorchCompile, "compile the model with torch.compile so that fewer, larger kernels are launched"};
    } else if (host_bound) {
      fix = {"", "the host is too slow to feed the GPU: look at data loading, syncs and Python overhead in the step"};
    }
    Finding finding = makeFinding(
        "gpu/idle", idle_fraction >= 0.5 ? "error" : "warning",
        fmt::format("GPU idle {} of the steady state", formatPercent(idle_fraction)),
        fmt::format("Between steps' kernels the GPU sat idle {} ({} per step). Of the idle gaps, {} waited on the host "
                    "(the launch came late) and {} waited on earlier work or a sync.",
                    formatSeconds(idle_s), formatSeconds(idle_s / steps), formatPercent(host_share),
                    formatPercent(1 - host_share)),
        fix);
    finding.count = static_cast<std::int64_t>(steps);
    setImpact(finding, facts, idle_s);
    setEvidence(finding, {{"idle_fraction", idle_fraction},
                          {"idle_seconds", idle_s},
                          {"idle_seconds_per_step", idle_s / steps},
                          {"window_seconds", window_s},
                          {"host_wait_fraction", host_share},
                          {"host_wait_seconds", idle_s * host_share},
                          {"kernel_wait_seconds", idle_s * (1 - host_share)},
                          {"classified_gap_seconds", classified},
                          {"unmatched_gap_seconds", split->unmatched_s},
                          {"kernels", scan->kernels}});
    out.push_back(std::move(finding));
  }

  const double short_share = static_cast<double>(scan->short_kernels) / static_cast<double>(scan->kernels);
  if (launch->launches > 0 && scan->kernels >= kLaunchBoundKernels && short_share >= kLaunchBoundShare &&
      idle_fraction >= kIdleFraction / 2) {
    const bool few_shapes = shapes <= kFewShapes;
    FixProposal fix;
    std::string advice;
    if (few_shapes && facts.compiled) {
      fix = {fix::kCompileMode, "torch.compile(model, mode=\"reduce-overhead\") replays the step as a CUDA graph"};
      advice = fmt::format("The run showed {} distinct input shape(s), so CUDA graphs fit.", shapes);
    } else if (few_shapes) {
      fix = {fix::kCudaGraphs, "capture the step in a CUDA graph (torch.cuda.graphs) and replay it"};
      advice = fmt::format("The run showed {} distinct input shape(s), so CUDA graphs fit.", shapes);
    } else {
      fix = facts.compiled ? FixProposal{"", "fuse more work per kernel (bigger batches, fewer small ops)"}
                           : FixProposal{fix::kTorchCompile, "torch.compile fuses small ops into fewer kernels"};
      advice = fmt::format("CUDA graphs are not advised: the run showed {} distinct input shapes, and each would "
                           "record its own graph (memory and recording time).", shapes);
    }
    const double saving = std::min(idle_s * host_share,
                                   static_cast<double>(scan->short_kernels) * launch->mean_s - scan->short_kernel_s);
    Finding finding = makeFinding(
        "gpu/launch-bound", "warning",
        fmt::format("{} of kernels are shorter than their launch", formatPercent(short_share)),
        fmt::format("{} of {} kernels ran shorter than the {} a launch takes on the host, so the GPU waits for "
                    "launches. {}",
                    scan->short_kernels, scan->kernels, formatSeconds(launch->mean_s), advice),
        fix);
    finding.count = scan->short_kernels;
    setImpact(finding, facts, std::max(0.0, saving));
    setEvidence(finding, {{"kernels", scan->kernels},
                          {"short_kernels", scan->short_kernels},
                          {"short_kernel_share", short_share},
                          {"mean_launch_seconds", launch->mean_s},
                          {"distinct_shapes", shapes},
                          {"cuda_graphs_advised", few_shapes},
                          {"idle_fraction", idle_fraction}});
    out.push_back(std::move(finding));
  }
  return {};
}

}  // namespace torchscope::analyzer
