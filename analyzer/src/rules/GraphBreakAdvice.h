// What a graph-break finding says: built from torch's graph-break registry fields (gb_type,
// explanation, hints) rather than its log wrapper, with torch's own deliberate breaks explained.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "../Locations.h"
#include "../Rules.h"

namespace torchscope::analyzer {

struct BreakCause {
  RuleId rule;  // graph-break/*
  FixProposal fix;
};

// Breaks torch makes on purpose, not about the user's code.
enum class Designed {
  kNo,
  kOptimizerGradMode,  // torch.optim's `_use_grad` calls torch._dynamo.graph_break() (pytorch#104053)
  kSchedulerWrapper,   // an LRScheduler's wrapper around optimizer.step, which Dynamo skips on purpose
  kTorchGraphBreak,    // any other torch._dynamo.graph_break() inside torch
  kDdpForward,         // DistributedDataParallel's own forward, which torch keeps out of the graph
};
// `library_site`: the innermost frame of the break when it is not the user's.
Designed designedBreak(const store::GraphBreak& row, const Location& library_site);

// How a break is told apart from others at the same line: torch's registry id (gb_id), else its break type.
std::string registryId(const store::GraphBreak& row);

// The breaks that point at one user line under one rule.
struct BreakGroup {
  Location where;
  Location library_site;  // torch's (or a library's) own line of the first break, when not the user's
  std::set<Designed> designed_kinds;                 // torch's deliberate breaks among them
  std::map<Designed, Location> designed_sites;       // and torch's line of each
  FixProposal fix;
  std::int64_t count = 0;
  double compile_s = 0;   // the breaks' shares of the compilations that broke (torch analysed them twice, split them)
  double resume_s = 0;    // compile time of the code after the break (every resume function, with its recompiles)
  double fallback_s = 0;  // what the eager fallbacks this break caused cost: torch could not resume after it
  double sync_s = 0;      // host time blocked in syncs at the line
  bool in_comprehension = false;
  bool run_compiled_no_graph = false;  // every compilation of the run produced no graph: all of it ran eagerly
  Location caused_by;     // eager fallback: the break torch could not resume after
  std::string caused_by_type;
  nlohmann::json breaks = nlohmann::json::array();  // distinct kinds: type, registry id, explanation, hints, count
  // Every break by torch's registry id (gb_id, else the break type), uncapped: the multi-rank divergence counts these.
  struct RegistryCount {
    std::string break_type;
    std::int64_t count = 0;
  };
  std::map<std::string, RegistryCount> by_registry_id;

  void addBreak(const store::GraphBreak& row);
  // The compile time the break adds to the run (docs/rules.md, graph-break/*).
  [[nodiscard]] double costSeconds() const { return compile_s + resume_s + fallback_s; }
  [[nodiscard]] nlohmann::json evidence() const;
};

struct BreakAdvice {
  Severity severity = Severity::kWarning;
  std::string title;
  std::string message;
  FixProposal fix;
};

BreakAdvice breakAdvice(RuleId rule, const BreakGroup& group);

}  // namespace torchscope::analyzer
