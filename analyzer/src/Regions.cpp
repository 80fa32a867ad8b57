// The compiled-region table: the store's `compiled_regions` rows (per region and step: calls, wall and thread-CPU
// time, the Dynamo frames compiled under it) joined with the compiles (their CUDA-graph skips too), graph breaks and
// recompiles of those frames; frames that ran in no timed region get rows of their own.
#include "torchscope/analyzer/Regions.h"

#include <algorithm>
#include <array>
#include <set>

#include "Rules.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/base/Settings.h"
#include "torchscope/store/Reader.h"

namespace torchscope::analyzer {
namespace {

constexpr double kRegionNanosPerSecond = 1e9;
constexpr double kRegionMinGain = 1e-3;  // of the eager time per call

double regionSeconds(std::int64_t nanos) { return static_cast<double>(nanos) / kRegionNanosPerSecond; }

// A region summed over its rows, with what the table needs besides: its steady-state time, CPU samples.
struct RegionRows {
  Region region;
  // The calls whose CPU time was read: their CPU time, their wall time (-1: a row without it) and their number.
  struct CpuCalls {
    std::int64_t cpu_ns = 0;
    std::int64_t wall_ns = 0;
    std::int64_t calls = 0;
  };
  std::int64_t steady_wall_ns = 0;  // its calls in the steady-state steps: their wall time, their CPU samples
  CpuCalls steady_cpu;
  bool cudagraphs_asked = false;  // its torch.compile call asked for CUDA graphs
  // Rows of a single call that compiled nothing, (pid, tid, start, end): their span is the call's own.
  std::vector<std::array<std::int64_t, 4>> single_calls;
  CpuCalls cpu;  // every such call that compiled nothing
};

void addCpuCalls(RegionRows::CpuCalls& sum, const RegionRows::CpuCalls& row) {
  sum.cpu_ns = base::saturatingAdd(sum.cpu_ns, row.cpu_ns);
  sum.wall_ns = sum.wall_ns < 0 || row.wall_ns < 0 ? -1 : base::saturatingAdd(sum.wall_ns, row.wall_ns);
  sum.calls = base::saturatingAdd(sum.calls, row.calls);
}

Result<std::map<std::int64_t, RegionRows>> loadRegionRows(const store::Reader& reader,
                                                          const std::set<std::int64_t>& steady) {
  auto loaded = reader.load<store::CompiledRegion>();
  if (!loaded) return loaded.error();
  std::map<std::int64_t, RegionRows> regions;
  for (const store::CompiledRegion& row : *loaded) {
    if (row.region < 0) continue;
    auto& rows = regions[row.region];
    Region& region = rows.region;
    if (region.region < 0) {
      region.region = row.region;
      region.name = row.name;
      region.calls = 0;
    }
    if (region.site_file.empty()) {
      region.site_file = row.site_file;
      region.site_line = row.site_line;
    }
    if (region.call_file.empty()) {
      region.call_file = row.call_file;
      region.call_line = row.call_line;
    }
    rows.cudagraphs_asked = rows.cudagraphs_asked || row.cudagraphs;
    const std::int64_t calls = std::max<std::int64_t>(row.calls, 0);
    const std::int64_t compile_calls = std::clamp<std::int64_t>(row.compile_calls, 0, calls);
    const std::int64_t wall = std::max<std::int64_t>(row.wall_ns, 0);
    const std::int64_t compile_wall = std::clamp<std::int64_t>(row.compile_wall_ns, 0, wall);
    if (calls == 1 && compile_calls == 0) rows.single_calls.push_back({row.pid, row.tid, row.start_ns, row.end_ns});
    region.calls = base::saturatingAdd(region.calls, calls);
    region.compile_calls = base::saturatingAdd(region.compile_calls, compile_calls);
    region.run_wall_s += regionSeconds(wall - compile_wall);
    const RegionRows::CpuCalls cpu{std::max<std::int64_t>(row.cpu_ns, 0), row.cpu_wall_ns,
                                   std::max<std::int64_t>(row.cpu_calls, 0)};
    addCpuCalls(rows.cpu, cpu);
    if (steady.count(row.step) != 0) {
      rows.steady_wall_ns = base::saturatingAdd(rows.steady_wall_ns, wall - compile_wall);
      region.steady_calls = base::saturatingAdd(region.steady_calls, calls - compile_calls);
      addCpuCalls(rows.steady_cpu, cpu);
    }
    for (const std::int64_t frame : row.frameIds()) {
      if (std::find(region.frames.begin(), region.frames.end(), frame) == region.frames.end()) {
        region.frames.push_back(frame);
      }
    }
  }
  return regions;
}

// GPU kernel time per call under CUPTI: a kernel belongs to the region call whose host interval holds its launch (the
// earliest API call of its correlation id) on the launching thread. Only rows of one call are joined, since a row of
// several calls spans the code between them too; the time per call is over those calls, kernels or not.
Result<void> addKernelTimes(const store::Reader& reader, std::map<std::int64_t, RegionRows>& rows) {
  struct Call {
    std::int64_t start_ns;
    std::int64_t end_ns;
    std::int64_t region;
  };
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Call>> calls;  // by (pid, tid), in start order
  for (const auto& [id, entry] : rows) {
    for (const auto& [pid, tid, start, end] : entry.single_calls) calls[{pid, tid}].push_back({start, end, id});
  }
  if (calls.empty()) return {};
  for (auto& [thread, list] : calls) {
    std::sort(list.begin(), list.end(), [](const Call& a, const Call& b) { return a.start_ns < b.start_ns; });
  }
  std::map<std::int64_t, std::int64_t> kernel_ns;  // by region
  auto queried = reader.query(
      "SELECT launch.pid, launch.tid, launch.start_ns, k.end_ns - k.start_ns FROM kernels k "
      "JOIN (SELECT pid, correlation_id, tid, min(start_ns) AS start_ns FROM api_calls WHERE correlation_id >= 0 "
      "GROUP BY pid, correlation_id) launch ON launch.pid = k.pid AND launch.correlation_id = k.correlation_id",
      [&](const store::Row& row) {
        const auto thread = calls.find({row.integer(0), row.integer(1)});
        if (thread == calls.end()) return;
        const std::int64_t launch_ns = row.integer(2);
        const auto& list = thread->second;
        auto after = std::upper_bound(list.begin(), list.end(), launch_ns,
                                      [](std::int64_t ns, const Call& call) { return ns < call.start_ns; });
        if (after == list.begin()) return;
        const Call& call = *std::prev(after);
        if (launch_ns > call.end_ns) return;
        kernel_ns[call.region] = base::saturatingAdd(kernel_ns[call.region], std::max<std::int64_t>(row.integer(3), 0));
      });
  if (!queried) return queried.error();
  for (auto& [id, entry] : rows) {
    if (entry.single_calls.empty()) continue;
    entry.region.gpu_per_call_s = regionSeconds(kernel_ns[id]) / static_cast<double>(entry.single_calls.size());
  }
  return {};
}

// Inductor's reason per frame whose CUDA graphs it skipped (the last compile of the frame that says so).
std::map<std::int64_t, std::string> cudagraphSkips(const std::vector<store::Compile>& compiles) {
  std::map<std::int64_t, std::string> skips;
  constexpr std::string_view kPrefix = "skipping cudagraphs due to ";
  for (const auto& compile : compiles) {
    if (compile.cudagraph_skip_reason.empty()) continue;
    std::string reason = compile.cudagraph_skip_reason;
    if (reason.rfind(kPrefix, 0) == 0) reason.erase(0, kPrefix.size());
    skips[compile.frame_id] = std::move(reason);
  }
  return skips;
}

void addFrameFacts(Region& region, const std::vector<store::Compile>& compiles,
                   const std::vector<store::GraphBreak>& breaks, const std::vector<store::Recompile>& recompiles,
                   const std::map<std::int64_t, std::string>& cudagraph_skips) {
  const std::set<std::int64_t> frames(region.frames.begin(), region.frames.end());
  std::vector<store::Compile> own;
  std::set<std::string> eager;
  bool skipped = false;
  for (const auto& compile : compiles) {
    if (frames.count(compile.frame_id) == 0) continue;
    own.push_back(compile);
    if (compile.graph_count > 0) region.graphs += compile.graph_count;
    const std::int64_t dynamo = std::max<std::int64_t>(compile.dynamo_ns, 0);
    const std::int64_t aot = std::clamp<std::int64_t>(compile.aot_ns, 0, dynamo);
    const std::int64_t inductor = std::clamp<std::int64_t>(compile.inductor_ns, 0, aot);
    region.dynamo_s += regionSeconds(dynamo - aot);
    region.aot_s += regionSeconds(aot - inductor);
    region.inductor_s += regionSeconds(inductor);
    const bool resume = compile.co_name.rfind("torch_dynamo_resume_in_", 0) == 0;
    if (compile.status == "failed") {
      eager.insert((resume ? "resume function could not be compiled: " : "compile failed, fell back to eager: ") +
                   (compile.fail_type.empty() ? std::string("unknown error") : compile.fail_type));
    }
    skipped = skipped || compile.status == "skipped";
  }
  if (skipped && region.graphs == 0) eager.insert("no graph: Dynamo skipped every frame, all of it ran eagerly");
  region.compile_s = compileWallSeconds(own);
  for (const auto& graph_break : breaks) {
    if (frames.count(graph_break.frame_id) == 0) continue;
    region.graph_breaks += 1;
    if (graph_break.frame_skipped) {
      eager.insert("the rest of the frame ran eagerly after the graph break at " + graph_break.file + ":" +
                   std::to_string(graph_break.line));
    }
  }
  for (const auto& recompile : recompiles) {
    if (frames.count(recompile.frame_id) == 0) continue;
    region.recompiles += 1;
    region.recompile_causes[recompile.cause.empty() ? "other" : recompile.cause] += 1;
    if (recompile.limit_hit) eager.insert("recompile limit hit: " + recompile.co_name + " runs eagerly from then on");
  }
  for (const auto frame : region.frames) {
    if (const auto it = cudagraph_skips.find(frame); it != cudagraph_skips.end())
      region.cudagraphs = "skipped: " + it->second;
  }
  region.eager.assign(eager.begin(), eager.end());
}

// Frames compiled in no timed region: one row per code object.
std::vector<Region> frameRegions(const std::vector<store::Compile>& compiles, const std::set<std::int64_t>& claimed) {
  std::map<std::tuple<std::string, std::string, std::int64_t>, Region> by_code;
  for (const auto& compile : compiles) {
    if (claimed.count(compile.frame_id) != 0 || compile.frame_id < 0) continue;
    Region& region = by_code[{compile.co_filename, compile.co_name, compile.co_firstlineno}];
    region.name = compile.co_name.empty() ? "frame " + std::to_string(compile.frame_id) : compile.co_name;
    region.site_file = compile.co_filename;
    region.site_line = compile.co_firstlineno;
    if (std::find(region.frames.begin(), region.frames.end(), compile.frame_id) == region.frames.end()) {
      region.frames.push_back(compile.frame_id);
    }
  }
  std::vector<Region> regions;
  for (auto& [code, region] : by_code) regions.push_back(std::move(region));
  return regions;
}

std::string regionSiteKey(const Region& region) {
  return region.site_file + ":" + std::to_string(region.site_line) + ":" + region.name;
}

void compareWithEager(RegionTable& table, const RegionTable& eager) {
  table.against = eager.path;
  table.eager_steady_step_s = eager.steady_steps > 0 ? eager.steady_step_s : -1;
  std::map<std::string, const Region*> eager_regions;
  for (const auto& region : eager.regions) {
    if (region.region >= 0) eager_regions.emplace(regionSiteKey(region), &region);
  }
  double saved = 0;
  bool measured = false;
  for (auto& region : table.regions) {
    const auto it = eager_regions.find(regionSiteKey(region));
    if (it == eager_regions.end() || region.wall_per_call_s < 0) continue;
    const Region& other = *it->second;
    region.eager_calls = other.calls;
    region.eager_wall_per_call_s = other.wall_per_call_s;
    if (region.eager_wall_per_call_s < 0) continue;
    measured = true;
    const double gain = region.eager_wall_per_call_s - region.wall_per_call_s;
    if (region.wall_per_call_s > 0) region.speedup = region.eager_wall_per_call_s / region.wall_per_call_s;
    // Less than a thousandth faster is no gain: rounding, not something compile time could be repaid from.
    region.payoff_calls = gain > kRegionMinGain * region.eager_wall_per_call_s ? region.compile_s / gain : -1;
    region.saved_s = gain * static_cast<double>(std::max<std::int64_t>(region.calls, 0));
    saved += region.saved_s;
  }
  table.compared = measured;
  table.saved_s = saved;
  if (!measured)
    table.notes.push_back("no region of " + eager.path + " matches one of this run (same torch.compile call)");
}

Result<RegionTable> buildRegionTable(const std::string& path) {
  auto reader = store::Reader::open(path);
  if (!reader) return reader.error();
  auto facts = collectFacts(**reader);
  if (!facts) return facts.error();
  auto breaks = (*reader)->load<store::GraphBreak>();
  if (!breaks) return breaks.error();
  const auto cudagraph_skips = cudagraphSkips(facts->compiles);
  const bool gpu_run = !facts->compute_major.empty() || facts->count("kernels") > 0;
  const auto steady = facts->steadyStepIndices();
  auto rows = loadRegionRows(**reader, steady);
  if (!rows) return rows.error();
  if (facts->count("kernels") > 0) {
    if (auto kernels = addKernelTimes(**reader, *rows); !kernels) return kernels.error();
  }

  RegionTable table;
  table.path = path;
  table.compile_s = facts->compile_seconds;
  table.steps = facts->stepCount();
  table.steady_steps = static_cast<std::int64_t>(facts->steady_step_seconds.size());
  table.steady_step_s = facts->steady_step_median_s;
  table.steady_total_s = facts->steady_step_total_s;
  table.compiled_run_measured = !rows->empty();

  std::set<std::int64_t> claimed;
  std::set<std::int64_t> cudagraphs_asked;
  for (auto& [id, entry] : *rows) {
    Region region = std::move(entry.region);
    if (entry.cudagraphs_asked) cudagraphs_asked.insert(region.region);
    // Per call: the calls in the steady-state steps, since a first call (lazy initialisation, allocation, CUDA
    // graph recording) or one in a recompiling step would skew the speed-up and the calls to pay off; all calls
    // that compiled nothing when none ran in a steady-state step (a run without steps, or too short for any).
    const std::int64_t runs = region.calls - region.compile_calls;
    if (region.steady_calls > 0) {
      region.wall_per_call_s = regionSeconds(entry.steady_wall_ns) / static_cast<double>(region.steady_calls);
    } else if (runs > 0) {
      region.wall_per_call_s = region.run_wall_s / static_cast<double>(runs);
    }
    // CPU time is read on some calls only: per call over those calls, beside their own wall time, never over
    // the calls whose wall time alone was read.
    const RegionRows::CpuCalls& cpu = entry.steady_cpu.calls > 0 ? entry.steady_cpu : entry.cpu;
    if (cpu.calls > 0) {
      region.cpu_calls = cpu.calls;
      region.cpu_per_call_s = regionSeconds(cpu.cpu_ns) / static_cast<double>(cpu.calls);
      if (cpu.wall_ns > 0) {
        region.cpu_wall_per_call_s = regionSeconds(cpu.wall_ns) / static_cast<double>(cpu.calls);
        region.run_cpu_s = region.run_wall_s * static_cast<double>(cpu.cpu_ns) / static_cast<double>(cpu.wall_ns);
      } else {
        region.run_cpu_s = region.cpu_per_call_s * static_cast<double>(std::max<std::int64_t>(runs, 0));
      }
    }
    if (table.steady_total_s > 0 && !steady.empty()) {
      region.steady_share = regionSeconds(entry.steady_wall_ns) / table.steady_total_s;
    }
    claimed.insert(region.frames.begin(), region.frames.end());
    table.regions.push_back(std::move(region));
  }
  for (auto& region : frameRegions(facts->compiles, claimed)) table.regions.push_back(std::move(region));
  for (auto& region : table.regions) {
    addFrameFacts(region, facts->compiles, *breaks, facts->recompiles, cudagraph_skips);
    if (region.cudagraphs.empty() && cudagraphs_asked.count(region.region) != 0) {
      // Inductor names no reason when a graph has no CUDA tensor at all.
      region.cudagraphs = gpu_run ? "used" : "not used: no GPU in this run (CUDA graphs capture CUDA work only)";
    }
    table.regions_compile_s += region.compile_s;
  }
  std::stable_sort(table.regions.begin(), table.regions.end(), [](const Region& a, const Region& b) {
    return a.compile_s + std::max(a.run_wall_s, 0.0) > b.compile_s + std::max(b.run_wall_s, 0.0);
  });
  if (!table.compiled_run_measured && !table.regions.empty()) {
    table.notes.push_back("no region was timed per call (a store imported from a trace, or recorded with " +
                          std::string(base::settings::kRegions.name) +
                          "=0): one row per compiled frame, calls unknown");
  }
  if (table.regions.empty()) table.notes.push_back("the run compiled nothing");
  return table;
}

}  // namespace

Result<RegionTable> regionTable(const std::string& path, const std::string& against) {
  auto table = buildRegionTable(path);
  if (!table || against.empty()) return table;
  auto eager = buildRegionTable(against);
  if (!eager) return eager.error();
  compareWithEager(*table, *eager);
  return table;
}

}  // namespace torchscope::analyzer
