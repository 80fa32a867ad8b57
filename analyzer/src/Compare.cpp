#include "torchscope/analyzer/Compare.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "FactsJson.h"
#include "Rules.h"
#include "Stats.h"
#include "torchscope/base/JsonText.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::analyzer {

namespace {

constexpr double kCompileFloorSeconds = 1;  // compile time jitters; smaller growth is noise
constexpr std::int64_t kRepeatedSync = 2;   // a single sync is not a problem (as in the sync rules)

// Problems are matched by kind, file, function and detail, not by line: an edit above a line must not
// make every problem below it look new.
using ProblemKey = std::tuple<std::string, std::string, std::string, std::string>;

struct Side {
  Analysis analysis;
  std::map<ProblemKey, ProblemChange> problems;            // of every store
  std::map<std::int64_t, std::vector<double>> rank_steps;  // steady-state steps per rank
  std::vector<double> job_steps;  // the steady-state steps of the slowest process, which stand for the job's
  double job_median_s = -1;
  std::int64_t slowest_rank = -1;
  double compile_s = 0;  // the longest any process compiled: processes compile side by side
};

}  // namespace

Result<std::vector<ProblemCount>> problemCounts(const store::Reader& reader) {
  std::vector<ProblemCount> problems;
  auto add = [&](const store::Row& row, const char* kind) {
    problems.push_back({kind, row.text(0), row.integer(1), row.text(2), row.text(3), row.integer(4)});
  };
  auto breaks = reader.query(
      "SELECT file, min(line), function, break_type, count(*) FROM graph_breaks GROUP BY file, function, break_type",
      [&](const store::Row& row) { add(row, "graph-break"); });
  if (!breaks) return breaks.error();
  auto recompiles = reader.query(
      "SELECT co_filename, min(co_firstlineno), co_name, cause, count(*) FROM recompiles "
      "GROUP BY co_filename, co_name, cause",
      [&](const store::Row& row) { add(row, "recompile"); });
  if (!recompiles) return recompiles.error();
  auto syncs = reader.query(
      "SELECT f.value, t.line, t.function, o.value, t.n FROM (SELECT file_id, min(line) AS line, function, op_id, "
      "count(*) AS n FROM syncs GROUP BY file_id, function, op_id HAVING count(*) >= ?) t "
      "JOIN strings f ON f.id = t.file_id JOIN strings o ON o.id = t.op_id",
      [&](const store::Row& row) { add(row, "sync"); }, {kRepeatedSync});
  if (!syncs) return syncs.error();
  return problems;
}

namespace {

// Every store's problems as its map step counted them (the run summaries' rows): compare reads no store again.
void collectProblems(Side& side) {
  for (const auto& run : side.analysis.runs) {
    for (const auto& row : run.problems) {
      ProblemChange change{row.kind, row.file, row.line, row.function, row.detail, row.count};
      auto [it, inserted] =
          side.problems.try_emplace({change.kind, change.file, change.function, change.detail}, change);
      if (!inserted) it->second.count += change.count;
    }
  }
}

// The job's pace is its slowest process's: in a synchronous job (DDP, FSDP) every rank waits for it.
void chooseSlowest(Side& side) {
  std::map<std::string, std::int64_t> rank_of;  // store path -> rank
  for (const auto& rank : side.analysis.ranks.ranks) rank_of[rank.path] = rank.rank;
  for (const auto& run : side.analysis.runs) {
    const auto rank = rank_of.find(run.path);
    if (rank != rank_of.end()) side.rank_steps[rank->second] = run.steady_step_seconds;
    side.compile_s = std::max(side.compile_s, run.compile_seconds);
    if (run.steady_step_seconds.empty()) continue;
    if (run.steady_step_median_s > side.job_median_s) {
      side.job_steps = run.steady_step_seconds;
      side.job_median_s = run.steady_step_median_s;
      side.slowest_rank = rank != rank_of.end() ? rank->second : -1;
    }
  }
}

Result<Side> loadSide(const std::string& path) {
  auto stores = store::expandRunFolders({path});
  if (!stores) return stores.error();
  Side side;
  auto analysis = analyze(*stores);
  if (!analysis) return analysis.error();
  side.analysis = std::move(*analysis);
  collectProblems(side);
  chooseSlowest(side);
  return side;
}

StepTimeStats stepStats(const std::vector<double>& steps) {
  return {static_cast<std::int64_t>(steps.size()), median(steps), quantile(steps, 0.1), quantile(steps, 0.9)};
}

double changePercent(const StepTimeStats& base, const StepTimeStats& candidate) {
  return base.median_s > 0 && candidate.steps > 0 ? (candidate.median_s - base.median_s) / base.median_s * 100 : 0;
}

void compareRanks(const Side& base, const Side& candidate, Comparison& result) {
  if (base.rank_steps.size() < 2 && candidate.rank_steps.size() < 2) return;
  result.base_slowest_rank = base.slowest_rank;
  result.new_slowest_rank = candidate.slowest_rank;
  std::set<std::int64_t> ranks;
  for (const auto* side : {&base, &candidate}) {
    for (const auto& [rank, steps] : side->rank_steps) ranks.insert(rank);
  }
  for (const auto rank : ranks) {
    RankStepChange change{rank, {}, {}, 0};
    if (const auto it = base.rank_steps.find(rank); it != base.rank_steps.end())
      change.base_steps = stepStats(it->second);
    if (const auto it = candidate.rank_steps.find(rank); it != candidate.rank_steps.end())
      change.new_steps = stepStats(it->second);
    change.change_percent = changePercent(change.base_steps, change.new_steps);
    result.ranks.push_back(change);
  }
  const auto which = [](std::int64_t rank) {
    return rank < 0 ? std::string("its only process") : fmt::format("rank {}", rank);
  };
  result.notes.push_back(fmt::format("the job's step time is its slowest rank's: {} in the baseline, {} in the new run",
                                     which(base.slowest_rank), which(candidate.slowest_rank)));
}

// Findings by rule, file and function (not line, as problems), their counts and ranks added up.
std::map<std::tuple<RuleId, std::string, std::string>, FindingChange> findingsByPlace(
    const std::vector<Finding>& findings, bool baseline) {
  std::map<std::tuple<RuleId, std::string, std::string>, FindingChange> places;
  for (const auto& finding : findings) {
    auto [it, inserted] = places.try_emplace({finding.rule, finding.file, finding.function});
    FindingChange& change = it->second;
    if (inserted) change = {finding.rule, finding.title, finding.file, finding.line, finding.function, 0, 0, {}, {}};
    (baseline ? change.base_count : change.new_count) += finding.count;
    auto& ranks = baseline ? change.base_ranks : change.new_ranks;
    const auto more = ranksNamedBy(finding);
    std::set<std::int64_t> all(ranks.begin(), ranks.end());
    all.insert(more.begin(), more.end());
    ranks.assign(all.begin(), all.end());
  }
  return places;
}

void compareFindings(const std::vector<Finding>& base, const std::vector<Finding>& candidate, Comparison& result) {
  const auto before = findingsByPlace(base, true);
  const auto after = findingsByPlace(candidate, false);
  for (const auto& [place, change] : after) {
    const auto old = before.find(place);
    if (old == before.end()) {
      result.new_findings.push_back(change);
      result.divergence_regression = result.divergence_regression || change.rankDivergence();
      continue;
    }
    FindingChange both = change;
    both.base_count = old->second.base_count;
    both.base_ranks = old->second.base_ranks;
    if (both.base_count != both.new_count || both.base_ranks != both.new_ranks) result.changed_findings.push_back(both);
  }
  for (const auto& [place, change] : before) {
    if (!after.count(place)) result.gone_findings.push_back(change);
  }
}

}  // namespace

Result<Comparison> compareStores(const std::string& base_path, const std::string& new_path,
                                 const CompareOptions& options) {
  auto base = loadSide(base_path);
  if (!base) return base.error();
  auto candidate = loadSide(new_path);
  if (!candidate) return candidate.error();

  Comparison result;
  result.base_path = base_path;
  result.new_path = new_path;
  result.threshold_percent = options.threshold_percent;
  result.base_steps = stepStats(base->job_steps);
  result.new_steps = stepStats(candidate->job_steps);
  for (const auto* side : {&*base, &*candidate}) {
    for (const auto& run : side->analysis.runs) {
      if (run.partial)
        result.notes.push_back(run.path + ": the run did not finish; the comparison uses what was recorded");
    }
    for (const auto& reason : side->analysis.ranks.partial_reasons) {
      result.notes.push_back(fmt::format("{}: {}", side == &*base ? base_path : new_path, reason));
    }
  }
  if (result.base_steps.steps > 0 && result.new_steps.steps > 0 && result.base_steps.median_s > 0) {
    result.step_change_percent =
        (result.new_steps.median_s - result.base_steps.median_s) / result.base_steps.median_s * 100;
    result.p_value = mannWhitneyP(base->job_steps, candidate->job_steps);
    const bool testable = result.base_steps.steps >= 3 && result.new_steps.steps >= 3;
    if (!testable)
      result.notes.push_back(
          "fewer than 3 steady-state steps on a side: no significance test, the threshold alone decides");
    result.step_regression =
        result.step_change_percent > options.threshold_percent && (!testable || result.p_value < options.significance);
  } else {
    result.notes.push_back("no steady-state steps on one side: step time not compared");
  }
  result.base_compile_s = base->compile_s;
  result.new_compile_s = candidate->compile_s;
  const double compile_growth = result.new_compile_s - result.base_compile_s;
  result.compile_regression = result.base_compile_s > 0 && compile_growth > kCompileFloorSeconds &&
                              compile_growth > result.base_compile_s * options.threshold_percent / 100;
  for (const auto& [key, change] : candidate->problems) {
    if (!base->problems.count(key)) result.new_problems.push_back(change);
  }
  for (const auto& [key, change] : base->problems) {
    if (!candidate->problems.count(key)) result.gone_problems.push_back(change);
  }
  compareRanks(*base, *candidate, result);
  compareFindings(base->analysis.findings, candidate->analysis.findings, result);
  return result;
}

}  // namespace torchscope::analyzer
