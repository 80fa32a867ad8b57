// Multi-rank analysis: per-rank steps, collectives against compute, stragglers, divergence.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "RankFacts.h"
#include "Rules.h"
#include "Stats.h"
#include "rules/RecompileAdvice.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/base/SteadyState.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::analyzer {

namespace {

// A rank is slower in a step when its compute time exceeds the other ranks' median by this much...
constexpr double kSlowerShare = 0.10;
constexpr double kSlowerMinimumSeconds = 1e-3;
// ...and a straggler when that holds in this share of the steps compared (at least kMinimumSteps).
constexpr double kConsistentShare = 0.6;
constexpr std::size_t kMinimumSteps = 3;
// Exposed communication worth a finding: this share of the median step.
constexpr double kExposedShare = 0.2;
// A rank's typical steps (base/SteadyState.h): all but the first of two or more, which warms up. Unlike a run's
// steady state (Facts), steps that a compilation overlaps are not left out.
constexpr base::SteadyStateRule kRankSteadyState{
    .warmup_steps = 1, .min_steps_for_warmup = 2, .all_compiling_fallback = false};

Result<void> loadIdentity(const store::Reader& reader, RankFacts& facts) {
  auto done = reader.query("SELECT pid, rank, world_size FROM processes WHERE rank >= 0 ORDER BY start_ns LIMIT 1",
                           [&](const store::Row& row) {
                             facts.summary.pid = row.integer(0);
                             facts.summary.rank = row.integer(1);
                             facts.world_size = row.integer(2);
                           });
  if (!done) return done.error();
  if (facts.summary.rank < 0) {
    facts.summary.rank = store::rankInStoreName(std::filesystem::path(reader.path()).filename().string());
  }
  return reader.query("SELECT key, value FROM run_attributes WHERE key IN (?, ?)",
                      [&](const store::Row& row) {
                        (row.text(0) == store::kLauncherAttribute ? facts.launcher : facts.job_id) = row.text(1);
                      },
                      {std::string(store::kLauncherAttribute), std::string(store::kJobIdAttribute)});
}

}  // namespace

double unionSeconds(std::vector<std::pair<base::Nanos, base::Nanos>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0;
  base::Nanos open = 0, close = -1;
  for (const auto& [begin, end] : intervals) {
    if (begin > close) {
      total += static_cast<double>(base::spanNanos(open, close));
      open = begin;
      close = end;
    } else {
      close = std::max(close, end);
    }
  }
  total += static_cast<double>(base::spanNanos(open, close));
  return toSeconds(total);
}

namespace {

// Time the training thread waited for the step's collectives: a DDP bucket's all-reduce overlaps the
// backward pass until the last bucket is launched, after which the reducer only waits; a synchronous
// call waits whole; an NCCL kernel waits for the part no compute kernel overlapped.
double exposedSeconds(const std::vector<CollectiveSpan>& spans) {
  base::Nanos last_bucket_start = 0;
  for (const auto& span : spans) {
    if (span.bucket) last_bucket_start = std::max(last_bucket_start, span.start_ns);
  }
  std::vector<std::pair<base::Nanos, base::Nanos>> waited;
  double kernels_exposed = 0;
  for (const auto& span : spans) {
    if (span.bucket) {
      waited.emplace_back(std::max(span.start_ns, last_bucket_start), span.end_ns);
    } else if (span.blocking) {
      waited.emplace_back(span.start_ns, span.end_ns);
    } else if (span.gpu) {
      kernels_exposed += toSeconds(static_cast<double>(base::spanNanos(span.start_ns, span.end_ns))) - span.hidden_s;
    }
  }
  return unionSeconds(std::move(waited)) + std::max(0.0, kernels_exposed);
}

void summarizeRank(RankFacts& facts) {
  RankSummary& summary = facts.summary;
  std::vector<std::pair<base::Nanos, base::Nanos>> all;
  double hidden = 0;
  for (const auto& span : facts.collectives) {
    all.emplace_back(span.start_ns, span.end_ns);
    hidden += span.hidden_s;
  }
  summary.collectives = static_cast<std::int64_t>(facts.collectives.size());
  summary.collective_s = unionSeconds(all);
  std::size_t next = 0;
  for (std::size_t i = 0; i < facts.steps.size(); ++i) {
    const auto& step = facts.steps[i];
    std::vector<CollectiveSpan> in_step;
    while (next < facts.collectives.size() && facts.collectives[next].start_ns < step.start_ns) ++next;
    for (std::size_t j = next; j < facts.collectives.size() && facts.collectives[j].start_ns < step.end_ns; ++j) {
      in_step.push_back(facts.collectives[j]);
    }
    const double seconds = toSeconds(static_cast<double>(base::spanNanos(step.start_ns, step.end_ns)));
    const double exposed = std::min(seconds, exposedSeconds(in_step));
    summary.step_seconds.push_back(seconds);
    summary.exposed_seconds.push_back(exposed);
    summary.exposed_collective_s += exposed;
  }
  std::vector<double> later, compute, waited;
  const std::vector<bool> no_compile_left_out(summary.step_seconds.size(), false);
  for (const std::size_t s : base::steadyStepPositions(no_compile_left_out, kRankSteadyState)) {
    later.push_back(summary.step_seconds[s]);
    compute.push_back(summary.step_seconds[s] - summary.exposed_seconds[s]);
    waited.push_back(summary.exposed_seconds[s]);
  }
  summary.step_median_s = median(later);
  summary.compute_median_s = median(compute);
  summary.exposed_median_s = median(waited);
  if (summary.collective_s > 0) {
    summary.overlap_fraction = std::clamp(1.0 - summary.exposed_collective_s / summary.collective_s, 0.0, 1.0);
    if (hidden > 0) summary.overlap_fraction = std::clamp(hidden / summary.collective_s, 0.0, 1.0);
  }
}

std::vector<Straggler> findStragglers(const std::vector<RankSummary>& ranks) {
  std::size_t steps = SIZE_MAX;
  for (const auto& rank : ranks) steps = std::min(steps, rank.step_seconds.size());
  std::vector<Straggler> stragglers;
  if (steps == SIZE_MAX || steps < kMinimumSteps + 1) return stragglers;
  // The steps every rank has, less the warm-up (kRankSteadyState).
  const std::vector<std::size_t> steady = base::steadyStepPositions(std::vector<bool>(steps, false), kRankSteadyState);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    Straggler candidate;
    candidate.rank = ranks[r].rank;
    std::vector<double> differences, others_compute, others_wait;
    for (const std::size_t s : steady) {
      std::vector<double> compute, wait;
      for (std::size_t o = 0; o < ranks.size(); ++o) {
        if (o == r) continue;
        compute.push_back(ranks[o].step_seconds[s] - ranks[o].exposed_seconds[s]);
        wait.push_back(ranks[o].exposed_seconds[s]);
      }
      const double mine = ranks[r].step_seconds[s] - ranks[r].exposed_seconds[s];
      const double typical = median(compute);
      ++candidate.steps_compared;
      if (mine - typical > std::max(kSlowerShare * typical, kSlowerMinimumSeconds)) ++candidate.steps_slower;
      differences.push_back(mine - typical);
      others_compute.push_back(typical);
      others_wait.push_back(median(wait));
    }
    const bool consistent =
        candidate.steps_slower >= static_cast<std::int64_t>(kMinimumSteps) &&
        static_cast<double>(candidate.steps_slower) >= kConsistentShare * static_cast<double>(candidate.steps_compared);
    if (!consistent) continue;
    candidate.slower_by_s = median(differences);
    const double typical = median(others_compute);
    candidate.slower_fraction = typical > 0 ? candidate.slower_by_s / typical : 0;
    candidate.others_wait_s = median(others_wait);
    stragglers.push_back(candidate);
  }
  std::sort(stragglers.begin(), stragglers.end(),
            [](const auto& a, const auto& b) { return a.slower_by_s > b.slower_by_s; });
  return stragglers;
}

// What one rank recorded at one place, keyed by rule, user line and (for graph breaks) torch's registry id.
using OccurrenceKey = std::tuple<RuleId, std::string, std::int64_t, std::string, std::string>;

std::vector<Divergence> findDivergences(const std::vector<RankSummary>& ranks,
                                        const std::vector<std::vector<Occurrence>>& occurrences) {
  std::map<OccurrenceKey, std::vector<const Occurrence*>> per_key;  // per rank index, null where the rank had none
  for (std::size_t r = 0; r < occurrences.size(); ++r) {
    for (const auto& occurrence : occurrences[r]) {
      auto& per_rank =
          per_key[{occurrence.rule, occurrence.file, occurrence.line, occurrence.function, occurrence.registry_id}];
      per_rank.resize(ranks.size(), nullptr);
      per_rank[r] = &occurrence;
    }
  }
  std::vector<Divergence> divergences;
  for (const auto& [key, per_rank] : per_key) {
    const auto count = [](const Occurrence* occurrence) { return occurrence ? occurrence->count : 0; };
    std::map<std::int64_t, std::size_t> histogram;
    for (const auto* occurrence : per_rank) ++histogram[count(occurrence)];
    if (histogram.size() < 2) continue;
    const auto majority = std::max_element(histogram.begin(), histogram.end(),
                                           [](const auto& a, const auto& b) { return a.second < b.second; });
    // No majority (two ranks of two disagree): the ranks that have more are the divergent ones.
    std::int64_t typical = majority->first;
    if (std::count_if(histogram.begin(), histogram.end(), [&](const auto& e) { return e.second == majority->second; }) >
        1) {
      typical = histogram.begin()->first;
    }
    Divergence divergence;
    std::tie(divergence.rule, divergence.file, divergence.line, divergence.function, divergence.registry_id) = key;
    divergence.majority_count = typical;
    for (std::size_t r = 0; r < per_rank.size(); ++r) {
      if (count(per_rank[r]) == typical) {
        divergence.majority_ranks.push_back(ranks[r].rank);
        continue;
      }
      divergence.ranks.push_back(ranks[r].rank);
      divergence.counts.push_back(count(per_rank[r]));
      divergence.compile_seconds.push_back(per_rank[r] ? per_rank[r]->compile_s : 0);
    }
    // The words of a rank that had it: the divergent ranks' first, else the majority's.
    for (const auto* occurrence : per_rank) {
      if (occurrence && (divergence.detail.empty() || count(occurrence) != typical))
        divergence.detail = occurrence->detail;
    }
    divergences.push_back(std::move(divergence));
  }
  return divergences;
}

std::string rankList(const std::vector<std::int64_t>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
  }
  return (ranks.size() == 1 ? "rank " : "ranks ") + text;
}

// The ranks of [0, world_size) that left no store, as ranges [first, last], found from the ranks present: a store's
// world_size can be any number, so the world is never walked rank by rank.
std::vector<std::pair<std::int64_t, std::int64_t>> missingRanks(const std::set<std::int64_t>& present,
                                                                std::int64_t world_size) {
  std::vector<std::pair<std::int64_t, std::int64_t>> missing;
  std::int64_t next = 0;                     // the lowest rank not accounted for yet
  for (const std::int64_t rank : present) {  // in order, none negative
    if (rank >= world_size) break;           // outside the world it declared
    if (rank > next) missing.emplace_back(next, rank - 1);
    next = rank + 1;
  }
  if (next < world_size) missing.emplace_back(next, world_size - 1);
  return missing;
}

// "rank 2", "ranks 1 and 3", "ranks 1, 4 to 9 and 12": runs of three or more as a range.
std::string rankRangeList(const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges) {
  std::vector<std::string> items;
  for (const auto& [first, last] : ranges) {
    if (last - first >= 2) {
      items.push_back(fmt::format("{} to {}", first, last));
    } else {
      for (std::int64_t rank = first; rank <= last; ++rank) items.push_back(std::to_string(rank));
    }
  }
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  }
  const bool one = ranges.size() == 1 && ranges.front().first == ranges.front().second;
  return (one ? "rank " : "ranks ") + text;
}

// A title starts with a capital letter, also when it starts with "rank 3".
std::string capitalized(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text;
}

std::string timesOrNever(std::int64_t count) { return count == 0 ? "never" : times(count); }

double totalStepSeconds(const RankSummary& rank) {
  double total = 0;
  for (const double seconds : rank.step_seconds) total += seconds;
  return total;
}

}  // namespace

Result<RankFacts> collectRankFacts(const Context& context, const RunSummary& run) {
  const store::Reader& reader = context.reader;
  RankFacts facts;
  facts.summary.path = reader.path();
  facts.summary.host = run.run.host;
  facts.summary.partial = run.partial;
  facts.summary.compile_s = run.compile_seconds;
  facts.summary.graph_breaks = run.graph_breaks;
  facts.summary.recompiles = run.recompiles;
  if (auto done = loadIdentity(reader, facts); !done) return done.error();
  if (facts.summary.rank < 0) return facts;
  auto steps = reader.load<store::Step>();
  if (!steps) return steps.error();
  facts.steps = std::move(*steps);
  std::sort(facts.steps.begin(), facts.steps.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  facts.collectives = context.facts.collectives;
  std::sort(facts.collectives.begin(), facts.collectives.end(),
            [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  summarizeRank(facts);
  auto breaks = graphBreakOccurrences(context);
  if (!breaks) return breaks.error();
  facts.occurrences = std::move(*breaks);
  auto recompiles = recompileOccurrences(context);
  facts.occurrences.insert(facts.occurrences.end(), recompiles.begin(), recompiles.end());
  return facts;
}

RankAnalysis analyzeRanks(std::vector<RankFacts> ranks, std::vector<UnanalysedStore> unanalysed) {
  RankAnalysis analysis;
  std::sort(unanalysed.begin(), unanalysed.end(),
            [](const auto& a, const auto& b) { return std::tie(a.rank, a.path) < std::tie(b.rank, b.path); });
  std::vector<std::vector<Occurrence>> rank_occurrences;
  std::set<std::int64_t> seen;
  for (auto& facts : ranks) {
    if (facts.summary.rank < 0 || !seen.insert(facts.summary.rank).second) continue;
    analysis.world_size = std::max(analysis.world_size, facts.world_size);
    if (analysis.launcher.empty()) analysis.launcher = facts.launcher;
    if (analysis.job_id.empty()) analysis.job_id = facts.job_id;
    if (facts.summary.partial) {
      analysis.partial_reasons.push_back(
          fmt::format("rank {} did not finish (its store did not close: crash or kill)", facts.summary.rank));
    }
    analysis.ranks.push_back(std::move(facts.summary));
    rank_occurrences.push_back(std::move(facts.occurrences));
  }
  // By rank, with the occurrences in the same order.
  std::vector<std::size_t> order(analysis.ranks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](auto a, auto b) { return analysis.ranks[a].rank < analysis.ranks[b].rank; });
  std::vector<RankSummary> sorted_ranks;
  std::vector<std::vector<Occurrence>> sorted_occurrences;
  for (const auto i : order) {
    sorted_ranks.push_back(std::move(analysis.ranks[i]));
    sorted_occurrences.push_back(std::move(rank_occurrences[i]));
  }
  analysis.ranks = std::move(sorted_ranks);
  // A store that could not be read is no missing store: it is named with the reason.
  std::set<std::int64_t> accounted = seen;
  for (const auto& store : unanalysed) {
    if (store.rank >= 0) accounted.insert(store.rank);
    analysis.partial_reasons.push_back(fmt::format("{} ({}) was not analysed{}: {}",
                                                   store.rank >= 0 ? fmt::format("rank {}", store.rank) : "a store",
                                                   std::filesystem::path(store.path).filename().string(),
                                                   store.host.empty() ? "" : " on " + store.host, store.reason));
  }
  if (const auto missing = missingRanks(accounted, analysis.world_size); !missing.empty()) {
    analysis.partial_reasons.push_back(
        fmt::format("{} of the world of {} left no store", rankRangeList(missing), analysis.world_size));
  }
  // The missing ranks say it themselves; a store not analysed needs the count.
  if (!unanalysed.empty()) {
    const auto expected = std::max<std::int64_t>(analysis.world_size, static_cast<std::int64_t>(accounted.size()));
    analysis.partial_reasons.push_back(
        fmt::format("the report covers {} of the {} ranks", analysis.ranks.size(), expected));
  }
  analysis.unanalysed = std::move(unanalysed);
  analysis.partial = !analysis.partial_reasons.empty();
  if (analysis.ranks.size() < 2) return analysis;
  analysis.stragglers = findStragglers(analysis.ranks);
  analysis.divergences = findDivergences(analysis.ranks, sorted_occurrences);
  return analysis;
}

std::vector<Finding> rankFindings(const RankAnalysis& analysis, const std::vector<Finding>& merged,
                                  double run_seconds) {
  std::vector<Finding> out;
  if (analysis.empty()) return out;
  const auto fraction = [&](double seconds) {
    return run_seconds > 0 ? std::clamp(seconds / run_seconds, 0.0, 1.0) : 0.0;
  };
  for (const auto& straggler : analysis.stragglers) {
    const auto& rank = *std::find_if(analysis.ranks.begin(), analysis.ranks.end(),
                                     [&](const auto& r) { return r.rank == straggler.rank; });
    Finding finding = makeFinding(
        "ranks/straggler", Severity::kWarning,
        fmt::format("Rank {} is a straggler: {} slower per step than the other ranks", straggler.rank,
                    formatSeconds(straggler.slower_by_s)),
        fmt::format(
            "In {} of {} steps rank {} (host {}) spent more time outside collectives than the other ranks: "
            "{} per step against {} for the median rank (+{}). The other ranks wait for it in their "
            "collectives, {} per step, so the whole job runs at its pace. Its own time goes to compute "
            "outside collectives ({} per step){}. Look at what this rank does differently: its share of "
            "the data (sizes, padding, loading), work under `if rank == ...`, or a slower host or device.",
            straggler.steps_slower, straggler.steps_compared, straggler.rank, rank.host.empty() ? "?" : rank.host,
            formatSeconds(rank.compute_median_s), formatSeconds(rank.compute_median_s - straggler.slower_by_s),
            formatPercent(straggler.slower_fraction), formatSeconds(straggler.others_wait_s),
            formatSeconds(rank.compute_median_s),
            rank.compile_s > 0 ? fmt::format(" and {} of compilation over the run", formatSeconds(rank.compile_s))
                               : ""),
        {"", "Balance the work across ranks (same batch sizes and shapes per rank), or find the rank's extra work."});
    finding.count = straggler.steps_slower;
    finding.function = fmt::format("rank {}", straggler.rank);
    finding.impact_seconds = straggler.slower_by_s * static_cast<double>(straggler.steps_compared);
    finding.impact_fraction = fraction(finding.impact_seconds);
    setEvidence(finding, {{"rank", straggler.rank},
                          {"host", rank.host},
                          {"slower_by_seconds", straggler.slower_by_s},
                          {"slower_fraction", straggler.slower_fraction},
                          {"steps_slower", straggler.steps_slower},
                          {"steps_compared", straggler.steps_compared},
                          {"others_wait_seconds", straggler.others_wait_s}});
    out.push_back(std::move(finding));
  }
  for (const auto& divergence : analysis.divergences) {
    const bool recompile = divergence.rule.family() == "recompile";
    const auto original = std::find_if(merged.begin(), merged.end(), [&](const Finding& f) {
      return f.rule == divergence.rule && f.file == divergence.file && f.line == divergence.line &&
             f.function == divergence.function;
    });
    const bool has_original = original != merged.end();
    std::string divergent;
    double longest_compile_s = 0;
    for (std::size_t i = 0; i < divergence.ranks.size(); ++i) {
      divergent += fmt::format("{}rank {} ({})",
                               i == 0                             ? ""
                               : i + 1 == divergence.ranks.size() ? " and "
                                                                  : ", ",
                               divergence.ranks[i], timesOrNever(divergence.counts[i]));
      longest_compile_s = std::max(longest_compile_s, divergence.compile_seconds[i]);
    }
    const std::string location = formatLocation(divergence.file, divergence.line);
    const bool named_by_id = !divergence.registry_id.empty() && divergence.registry_id != divergence.detail;
    const std::string what = divergence.detail + (named_by_id ? ", " + divergence.registry_id : "");
    Finding finding = makeFinding(
        recompile ? RuleId("ranks/divergent-recompile") : RuleId("ranks/divergent-graph-break"), Severity::kWarning,
        capitalized(fmt::format("{} {} differently from the other ranks at {}", rankList(divergence.ranks),
                                recompile ? "recompiled" : "broke the graph", location)),
        fmt::format("At {} torch.compile {} ({}) a different number of times on {} than on the other {} ({}), as their "
                    "stores recorded it{}. Ranks that compile different graphs run different code: the rank is slower "
                    "while it compiles, the others wait for it in their collectives, and collectives issued from "
                    "different graphs can mismatch. {}",
                    location.empty() ? "an unknown line" : location, recompile ? "recompiled" : "broke the graph", what,
                    divergent, rankList(divergence.majority_ranks), timesOrNever(divergence.majority_count),
                    longest_compile_s > 0 ? fmt::format("; compiling there took up to {} on one of them",
                                                        formatSeconds(longest_compile_s))
                                          : "",
                    has_original ? "The cause: " + original->message
                                 : "Look at what differs between the ranks there: input shapes, Python values, code "
                                   "under `if rank == ...`."),
        {has_original ? original->fix_id : "",
         has_original ? original->fix_summary : "Make every rank see the same shapes and Python values."});
    finding.file = divergence.file;
    finding.line = divergence.line;
    finding.function = divergence.function;
    finding.count = static_cast<std::int64_t>(divergence.ranks.size());
    // The divergent rank's own compile time there holds the others back; without it (the divergent ranks are the
    // ones that did not compile there), the merged finding's.
    finding.impact_seconds = longest_compile_s > 0 ? longest_compile_s : has_original ? original->impact_seconds : 0;
    finding.impact_fraction = fraction(finding.impact_seconds);
    setEvidence(finding, {{"rule", divergence.rule.text()},
                          {"ranks", divergence.ranks},
                          {"counts", divergence.counts},
                          {"majority_count", divergence.majority_count},
                          {"majority_ranks", divergence.majority_ranks},
                          {"registry_id", divergence.registry_id},
                          {"detail", divergence.detail},
                          {"compile_seconds", divergence.compile_seconds}});
    out.push_back(std::move(finding));
  }
  if (analysis.stragglers.empty()) {
    std::vector<double> exposed_share, waited;
    for (const auto& rank : analysis.ranks) {
      const double steps = totalStepSeconds(rank);
      if (steps > 0) exposed_share.push_back(rank.exposed_collective_s / steps);
      waited.push_back(rank.exposed_collective_s);
    }
    const double share = median(exposed_share);
    if (share >= kExposedShare) {
      Finding finding = makeFinding(
          "ranks/exposed-communication", Severity::kWarning,
          fmt::format("The ranks wait {} of each step for collectives", formatPercent(share)),
          fmt::format("Across {} ranks the training thread waited for collectives {} of the step time: communication "
                      "that compute did not hide. With DDP, larger buckets (`bucket_cap_mb`) launch fewer all-reduces, "
                      "`gradient_as_bucket_view=True` saves a copy, and gradient accumulation under `no_sync()` "
                      "communicates once per several steps.",
                      analysis.ranks.size(), formatPercent(share)),
          {"", "Overlap or reduce communication: bucket size, no_sync() accumulation, compression hooks."});
      finding.count = static_cast<std::int64_t>(analysis.ranks.size());
      finding.impact_seconds = median(waited);
      finding.impact_fraction = fraction(finding.impact_seconds);
      setEvidence(finding, {{"exposed_share", share}});
      out.push_back(std::move(finding));
    }
  }
  return out;
}

std::vector<std::int64_t> ranksNamedBy(const Finding& finding) {
  const nlohmann::json& evidence = finding.evidence;
  std::vector<std::int64_t> ranks;
  if (!evidence.is_object()) return ranks;
  if (const auto it = evidence.find("ranks"); it != evidence.end() && it->is_array()) {
    for (const auto& rank : *it) {
      if (rank.is_number_integer()) ranks.push_back(rank.get<std::int64_t>());
    }
  } else if (const auto one = evidence.find("rank"); one != evidence.end() && one->is_number_integer()) {
    ranks.push_back(one->get<std::int64_t>());
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

}  // namespace torchscope::analyzer
