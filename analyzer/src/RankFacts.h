// What the multi-rank analysis reads from each rank's store, and the analysis itself (Ranks.cpp).
#pragma once

#include <vector>

#include "Rules.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Ranks.h"

namespace torchscope::analyzer {

struct RankFacts {
  RankSummary summary;
  std::int64_t world_size = -1;
  std::string launcher;
  std::string job_id;
  // Read by the map step only: summarizeRank() turns them into the summary's per-step figures, and the rank facts
  // (docs/FORMAT.md, "Rank facts") carry the summary without them.
  std::vector<store::Step> steps;
  std::vector<CollectiveSpan> collectives;
  std::vector<Occurrence> occurrences;  // graph breaks and recompiles, for the divergence between ranks
};

// The rank facts of one store: its rank from the processes table (else from a `.rank<r>.` file
// name); `summary.rank` stays -1 for a store that is not one rank of a distributed job.
[[nodiscard]] Result<RankFacts> collectRankFacts(const Context& context, const RunSummary& run);

// The ranks side by side; `unanalysed` are the stores the map step could not read, reported and left out.
[[nodiscard]] RankAnalysis analyzeRanks(std::vector<RankFacts> ranks, std::vector<UnanalysedStore> unanalysed = {});

// The multi-rank findings (ranks/*) of an analysis; `run_seconds` is the job's wall span.
[[nodiscard]] std::vector<Finding> rankFindings(const RankAnalysis& analysis, const std::vector<Finding>& merged,
                                                double run_seconds);

}  // namespace torchscope::analyzer
