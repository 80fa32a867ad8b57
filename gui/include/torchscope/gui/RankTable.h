// The run-folder view's model (docs/gui.md, "Large run folders"): one row per store of a run folder with more ranks
// than kRunFolderViewAboveRanks, built from the rank facts the analysis reads (analyzer/RankFacts.h: a facts file
// beside the store when it is current, else the map step run here), with the findings merged across ranks. No rank's
// events are loaded into a timeline until that rank is opened. Qt-free.
//
// Error contract: buildRankTable() fails with kInvalidArgument when no store could be analysed, and with the merge's
// error for facts it refuses; a store that cannot be read is a row with `error`, never a failure of the table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "torchscope/analyzer/Finding.h"
#include "torchscope/base/Result.h"

namespace torchscope::gui {

// Up to one node's eight GPUs the ranks stay side by side in one timeline; more do not fit on screen as lanes and
// loading them all costs every rank's events in memory, so a folder of more stores opens as a table of its ranks.
inline constexpr std::size_t kRunFolderViewAboveRanks = 8;

// Whether `arguments` (the command's paths) are one run folder whose `stores` take the run-folder view.
[[nodiscard]] bool wantsRunFolderView(const std::vector<std::string>& arguments, std::size_t stores);

struct RankRow {
  std::string path;              // the store
  std::int64_t rank = -1;        // -1: not a rank of a distributed job (or unknown)
  std::string error;             // non-empty: the store could not be analysed, and why
  bool from_facts_file = false;  // read from STORE.facts.json rather than mapped here
  std::int64_t steps = 0;
  // Over the steady-state steps, as `torchscope compare` counts them.
  double mean_step_s = 0;
  double median_step_s = 0;
  double from_median_fraction = 0;  // (its median - the median of the ranks' medians) / the latter
  bool straggler = false;           // the analysis reports it as a straggler (ranks/straggler)
  double exposed_collective_s = 0;  // time its training thread waited for collectives, summed over steps
  std::int64_t graph_breaks = 0;
  std::int64_t recompiles = 0;
  std::int64_t peak_memory_bytes = -1;  // the highest GPU's peak allocated, else the host's peak RSS; -1 unknown
  bool peak_memory_gpu = false;
  std::int64_t findings = 0;  // the store's own findings, before the merge
  [[nodiscard]] bool analysed() const { return error.empty(); }
};

struct RankTable {
  std::vector<RankRow> rows;                // the stores' order (by rank, then name)
  std::vector<analyzer::Finding> findings;  // merged across the ranks, most impact first
  std::vector<std::string> notes;           // the ranks' partial reasons (a rank missing or not analysed)
};

// `stale` is asked between stores; true stops the build (its result is then an error nobody reads).
[[nodiscard]] Result<RankTable> buildRankTable(const std::vector<std::string>& stores,
                                               const std::function<bool()>& stale = {});

enum class RankColumn {
  kRank,
  kSteps,
  kMeanStep,
  kMedianStep,
  kFromMedian,
  kExposedComm,
  kRecompiles,
  kGraphBreaks,
  kPeakMemory,
  kFindings,
  kStore,
  kCount
};
[[nodiscard]] std::string rankColumnTitle(RankColumn column);
[[nodiscard]] std::string rankCell(const RankRow& row, RankColumn column);
// A merged finding on one line: severity, title, where, and the ranks its evidence names.
[[nodiscard]] std::string mergedFindingLine(const analyzer::Finding& finding);

}  // namespace torchscope::gui
