// One store's share of an analysis (the map step's output) as the JSON of a rank facts document, and back
// (docs/FORMAT.md, "Rank facts"). Every field the merge and the reports read travels; nothing else does.
#pragma once

#include <nlohmann/json.hpp>

#include "RankFacts.h"
#include "torchscope/analyzer/Analyzer.h"

namespace torchscope::analyzer {

// What the merge needs of one store: its run summary, findings and notes, and its rank facts without the steps and
// collectives they were summarized from.
struct StoreShare {
  Analysis analysis;  // one run
  RankFacts ranks;
};

// The map step's work on one store (Analyzer.cpp): its rules, its run summary and its rank facts.
[[nodiscard]] Result<StoreShare> analyzeStoreShare(const std::string& path, const AnalyzeOptions& options);
// The merge step's (Analyzer.cpp): the stores' findings merged, the ranks side by side, everything ranked.
[[nodiscard]] Analysis mergeStoreShares(std::vector<StoreShare> shares, std::vector<UnanalysedStore> unanalysed);
// The compare gate's problem rows of one store (Compare.cpp), which the map step keeps in the run summary.
[[nodiscard]] Result<std::vector<ProblemCount>> problemCounts(const store::Reader& reader);

// Most impact first, as every analysis ranks its findings.
void rankFindingsByImpact(std::vector<Finding>& findings);

// The share's objects of the document: "run", "findings", "notes" and "rank".
[[nodiscard]] nlohmann::json shareJson(const StoreShare& share);
// Throws nlohmann::json::exception for a document whose fields have the wrong types.
[[nodiscard]] StoreShare shareFromJson(const nlohmann::json& document);

}  // namespace torchscope::analyzer
