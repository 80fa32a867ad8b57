// The compiled-region table (`torchscope advise --regions`): one row per region the job compiled, joining
// what torch compiled (frames, graphs, graph breaks, recompiles, compile time by stage, CUDA graphs) with how
// the region ran (calls, run time per call, share of the steady-state step), and, given a run of the same job
// with compilation off (`--against EAGER.db`, `torchscope fix --fixes eager`), its eager time per call, its
// speed-up and the calls after which its compile time is paid off. docs/rules.md documents the JSON.
//
// Error contract: regionTable() fails with the store's error for a file it cannot read; nothing throws.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "torchscope/analyzer/Report.h"
#include "torchscope/base/Result.h"

namespace torchscope::analyzer {

struct Region {
  // The collector's region (what one torch.compile call returned, timed per call); -1 for Dynamo frames that
  // ran in no timed region (imported traces, stores written before regions were recorded, frames compiled
  // outside the job's torch.compile results).
  std::int64_t region = -1;
  std::string name;       // `Model.forward`, the function's name, or the frame's code name
  std::string site_file;  // the user's torch.compile call (or the frame's code for region -1)
  std::int64_t site_line = -1;
  std::string call_file;  // the user's call into the region (its first call)
  std::int64_t call_line = -1;
  std::vector<std::int64_t> frames;  // Dynamo frame ids compiled under it
  std::int64_t graphs = 0;
  std::int64_t graph_breaks = 0;
  std::int64_t recompiles = 0;
  std::map<std::string, std::int64_t> recompile_causes;  // cause -> count
  double compile_s = 0;                                  // wall time of its frames' compilations (their union)
  double dynamo_s = 0;  // by stage: Dynamo alone, AOTAutograd alone, Inductor (torch's cumulative times)
  double aot_s = 0;
  double inductor_s = 0;
  std::int64_t calls = -1;         // -1: not timed
  std::int64_t compile_calls = 0;  // calls during which torch compiled (their time is mostly compilation)
  std::int64_t steady_calls = 0;   // of the calls that compiled nothing, those in steady-state steps
  double run_wall_s = 0;           // the calls that compiled nothing, summed
  // Their thread CPU time: their wall time x the CPU share of the calls whose CPU was read (older stores, which
  // lack those calls' wall time: cpu_per_call_s x their number).
  double run_cpu_s = 0;
  // Wall time per call over the steady_calls (their time in the steady-state steps / steady_calls), so that a
  // warm-up call does not count; over all calls that compiled nothing when steady_calls is 0; -1 unknown.
  double wall_per_call_s = -1;
  // The calls whose thread CPU time was read (every 8th of a step's, the steady ones as above): their number, their
  // CPU time per call and the wall time per call of those same calls (-1 unknown: a store older than that figure).
  std::int64_t cpu_calls = 0;
  double cpu_per_call_s = -1;
  double cpu_wall_per_call_s = -1;
  double gpu_per_call_s = -1;      // GPU kernel time per call under CUPTI (its calls of one row each); -1 unknown
  double steady_share = -1;        // its wall time in the steady-state steps / their time, -1 unknown
  std::vector<std::string> eager;  // why (part of) it ran eagerly: failed compile, skipped frame, limit hit
  // "" not asked for; "used" (asked for, on a GPU, no skip); "skipped: <Inductor's reason>"; "not used: ..." (no GPU)
  std::string cudagraphs;
  // Compiled versus eager (`against` a run with compilation off).
  std::int64_t eager_calls = -1;
  double eager_wall_per_call_s = -1;
  double speedup = -1;       // eager / compiled per call
  double payoff_calls = -1;  // compile_s / (eager - compiled per call); -1: never pays (not faster) or unknown
  double saved_s = 0;        // (eager - compiled per call) x the calls of this run

  // Whether this run made the calls that repay its compile time.
  [[nodiscard]] bool paidOff() const { return payoff_calls >= 0 && static_cast<double>(calls) >= payoff_calls; }
};

struct RegionTable {
  std::string path;
  std::string against;           // the eager run's store, "" none
  std::vector<Region> regions;   // most compile + run time first
  double compile_s = 0;          // the run's compile time (compileWallSeconds)
  double regions_compile_s = 0;  // the rows' compile time, summed
  std::int64_t steps = 0;
  std::int64_t steady_steps = 0;
  double steady_step_s = 0;            // median steady-state step
  double steady_total_s = 0;           // the steady-state steps, summed
  double eager_steady_step_s = -1;     // the eager run's median steady-state step, -1 none
  bool compared = false;               // regions matched with an eager run's (`against`)
  double saved_s = 0;                  // what the compiled regions saved over this run's calls (negative: they lost)
  bool compiled_run_measured = false;  // regions timed per call
  std::vector<std::string> notes;

  // Compared with an eager run, whether the regions saved at least their compile time over this run's calls.
  [[nodiscard]] bool pays() const { return compared && saved_s >= compile_s; }
};

// The table of the store at `path`; `against`: a store of the same job run with compilation off ("" none).
[[nodiscard]] Result<RegionTable> regionTable(const std::string& path, const std::string& against = "");

// text, json, markdown or html (others render as text). JSON: {"schema", "path", ..., "regions": [...]}.
[[nodiscard]] std::string renderRegions(const RegionTable& table, Format format, const RenderOptions& options = {});

// A region's time as the table prints it (s, ms or us; "0 s"); "" when unknown (negative). Shared with the GUI's pane.
[[nodiscard]] std::string regionSecondsText(double seconds);
// When a region faster compiled repays its compile time, against this run's calls: "paid off after 245 calls;
// this run made 300", "would pay off after 429 calls; this run made 40"; "" when it never pays. Shared with the
// compile/does-not-pay finding and `torchscope fix`, so that they say the same.
[[nodiscard]] std::string regionPayoffText(const Region& region);
// What compiled regions saved against eager calls, signed: "saved 886.44 ms", "ran 2.80 ms slower".
[[nodiscard]] std::string regionsSavedText(double saved_s);
// "file:line", the file alone without a line, "" without a file.
[[nodiscard]] std::string regionPlaceText(const std::string& file, std::int64_t line);

// The JSON schema version of the region table.
inline constexpr std::string_view kRegionsJsonSchema = "torchscope.regions/1";

}  // namespace torchscope::analyzer
