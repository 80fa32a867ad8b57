// The ranks of a distributed job side by side (docs/rules.md, "Multi-rank jobs"): a per-rank table
// of steps, time in collectives against compute and their overlap, stragglers, and the ranks whose
// graph breaks or recompiles differ from the others'. Filled by analyze() when its stores hold two
// or more ranks (one store per rank, as the collector writes them into a run folder).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torchscope/analyzer/Finding.h"
#include "torchscope/analyzer/RuleTable.h"

namespace torchscope::analyzer {

struct RankSummary {
  std::int64_t rank = -1;
  std::string path;  // the rank's store
  std::string host;
  std::int64_t pid = 0;
  bool partial = false;                 // the rank's store did not close (crash, kill)
  std::vector<double> step_seconds;     // every step, in order
  std::vector<double> exposed_seconds;  // per step: time the rank's training thread waited for collectives
  double step_median_s = 0;             // steps after the first
  double compute_median_s = 0;          // per step: the step minus the exposed collective time
  double exposed_median_s = 0;          // per step: the exposed collective time (steps after the first)
  double collective_s = 0;              // union of the collectives' intervals over the run
  double exposed_collective_s = 0;      // summed over steps
  double overlap_fraction = 0;          // share of collective time hidden behind compute, in [0, 1]
  std::int64_t collectives = 0;
  double compile_s = 0;
  std::int64_t graph_breaks = 0;
  std::int64_t recompiles = 0;
};

// A rank consistently slower than the others outside collectives.
struct Straggler {
  std::int64_t rank = -1;
  double slower_by_s = 0;         // median over steps of its compute time minus the median rank's
  double slower_fraction = 0;     // the same relative to the median rank's compute time
  std::int64_t steps_slower = 0;  // steps where it was the slow one
  std::int64_t steps_compared = 0;
  double others_wait_s = 0;  // median per step of the other ranks' exposed collective time
};

// A graph break or recompile that some ranks had and others did not (or had a different number of times),
// counted from every rank's store rows, whatever it cost.
struct Divergence {
  RuleId rule;  // the per-rank finding's rule, e.g. recompile/dynamic-shape
  std::string file;
  std::int64_t line = -1;
  std::string function;
  std::vector<std::int64_t> ranks;           // the ranks that differ from the majority
  std::vector<std::int64_t> counts;          // their occurrences, same order
  std::int64_t majority_count = 0;           // occurrences on the other ranks
  std::vector<std::int64_t> majority_ranks;  // the other ranks
  std::string registry_id;  // graph breaks: torch's registry id (else the break type) counted; "" for recompiles
  std::string detail;       // what happened there, in words: the break type, or the recompile's cause
  std::vector<double> compile_seconds;  // the divergent ranks' compile time there, same order as `ranks`
};

// A store of the run that the map step could not read (docs/FORMAT.md, "Rank facts"): damaged, of another schema
// version, or its worker died. Reported, and the other ranks merged without it.
struct UnanalysedStore {
  std::int64_t rank = -1;  // from its file name, -1 unknown
  std::string path;
  std::string host;    // the machine that tried it, "" unknown
  std::string reason;  // in words, one line
};

struct RankAnalysis {
  std::int64_t world_size = -1;  // as the launcher said, -1 unknown
  std::string launcher;
  std::string job_id;
  bool partial = false;  // a rank did not finish, or a rank of the world is missing
  std::vector<std::string> partial_reasons;
  std::vector<RankSummary> ranks;  // by rank
  std::vector<Straggler> stragglers;
  std::vector<Divergence> divergences;
  std::vector<UnanalysedStore> unanalysed;  // left out of everything above, named in partial_reasons
  [[nodiscard]] bool empty() const { return ranks.size() < 2; }
};

// The ranks a cross-rank finding names, in order: `ranks` of its evidence (merged or divergent), else its `rank`
// (a straggler); none for a finding of one process.
[[nodiscard]] std::vector<std::int64_t> ranksNamedBy(const Finding& finding);

}  // namespace torchscope::analyzer
