#include "torchscope/analyzer/Compare.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "Rules.h"
#include "Stats.h"

namespace torchscope::analyzer {

namespace {

constexpr double kCompileFloorSeconds = 1;  // compile time jitters; smaller growth is noise
constexpr std::int64_t kRepeatedSync = 2;   // a single sync is not a problem (as in the sync rules)

// Problems are matched by kind, file, function and detail, not by line: an edit above a line must not
// make every problem below it look new.
using ProblemKey = std::tuple<std::string, std::string, std::string, std::string>;

struct Side {
  Facts facts;
  std::map<ProblemKey, ProblemChange> problems;
};

Result<void> collectProblems(const store::Reader& reader, Side& side) {
  auto add = [&](const store::Row& row, const char* kind) {
    ProblemChange change{kind, row.text(0), row.integer(1), row.text(2), row.text(3), row.integer(4)};
    auto [it, inserted] = side.problems.try_emplace({change.kind, change.file, change.function, change.detail}, change);
    if (!inserted) it->second.count += change.count;
  };
  auto breaks = reader.query(
      "SELECT file, min(line), function, break_type, count(*) FROM graph_breaks GROUP BY file, function, break_type",
      [&](const store::Row& row) { add(row, "graph-break"); });
  if (!breaks) return breaks;
  auto recompiles = reader.query(
      "SELECT co_filename, min(co_firstlineno), co_name, cause, count(*) FROM recompiles "
      "GROUP BY co_filename, co_name, cause",
      [&](const store::Row& row) { add(row, "recompile"); });
  if (!recompiles) return recompiles;
  return reader.query(
      "SELECT f.value, t.line, t.function, o.value, t.n FROM (SELECT file_id, min(line) AS line, function, op_id, "
      "count(*) AS n FROM syncs GROUP BY file_id, function, op_id HAVING count(*) >= ?) t "
      "JOIN strings f ON f.id = t.file_id JOIN strings o ON o.id = t.op_id",
      [&](const store::Row& row) { add(row, "sync"); }, {kRepeatedSync});
}

Result<Side> loadSide(const std::string& path) {
  auto reader = store::Reader::open(path);
  if (!reader) return reader.error();
  Side side;
  auto facts = collectFacts(**reader);
  if (!facts) return makeError(facts.error().code, path + ": " + facts.error().message);
  side.facts = std::move(*facts);
  if (auto done = collectProblems(**reader, side); !done) return makeError(done.error().code, path + ": " + done.error().message);
  return side;
}

StepTimeStats stepStats(const std::vector<double>& steps) {
  return {static_cast<std::int64_t>(steps.size()), median(steps), quantile(steps, 0.1), quantile(steps, 0.9)};
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
  result.base_steps = stepStats(base->facts.steady_step_seconds);
  result.new_steps = stepStats(candidate->facts.steady_step_seconds);
  for (const auto* side : {&*base, &*candidate}) {
    if (side->facts.partial) {
      result.notes.push_back(fmt::format("{}: the run did not finish; the comparison uses what was recorded",
                                         side == &*base ? base_path : new_path));
    }
  }
  if (result.base_steps.steps > 0 && result.new_steps.steps > 0 && result.base_steps.median_s > 0) {
    result.step_change_percent = (result.new_steps.median_s - result.base_steps.median_s) / result.base_steps.median_s * 100;
    result.p_value = mannWhitneyP(base->facts.steady_step_seconds, candidate->facts.steady_step_seconds);
    const bool testable = result.base_steps.steps >= 3 && result.new_steps.steps >= 3;
    if (!testable) result.notes.push_back("fewer than 3 steady-state steps on a side: no significance test, the threshold alone decides");
    result.step_regression = result.step_change_percent > options.threshold_percent &&
                             (!testable || result.p_value < options.significance);
  } else {
    result.notes.push_back("no steady-state steps on one side: step time not compared");
  }
  result.base_compile_s = base->facts.compile_seconds;
  result.new_compile_s = candidate->facts.compile_seconds;
  const double compile_growth = result.new_compile_s - result.base_compile_s;
  result.compile_regression = result.base_compile_s > 0 && compile_growth > kCompileFloorSeconds &&
                              compile_growth > result.base_compile_s * options.threshold_percent / 100;
  for (const auto& [key, change] : candidate->problems) {
    if (!base->problems.count(key)) result.new_problems.push_back(change);
  }
  for (const auto& [key, change] : base->problems) {
    if (!candidate->problems.count(key)) result.gone_problems.push_back(change);
  }
  return result;
}

}  // namespace torchscope::analyzer
