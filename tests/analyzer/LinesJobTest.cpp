// The line table on real jobs on the CPU, read as a user reads it (`torchscope advise` and `stats`): a training loop
// whose batches are built by a Python function of its own lists the loop's line that calls it, by its total; a very
// short run of fast steps gives no share above 100 % and says over what its figures are taken, in the words of the
// run's own step summary.
#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include "LineTableOf.h"
#include "TestSupport.h"
#include "torchscope/analyzer/LineTable.h"
#include "torchscope/store/Reader.h"
#include "torchscope/testing/Subprocess.h"

namespace torchscope::analyzer::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using torchscope::testing::markedLine;
using torchscope::testing::ProgramOptions;
using torchscope::testing::ProgramOutcome;
using torchscope::testing::runTorchscope;
using torchscope::testing::runUnderTorchscope;

std::filesystem::path jobScript(const std::string& name) { return sourcePath("tests/analyzer/lines/" + name); }

// The job recorded at the sampler's default rate, whatever the environment asks.
std::string record(const TempDir& dir, const std::string& script, const std::string& steps) {
  const std::string store = dir.file(script + ".db");
  ProgramOptions options;
  options.env = {{"TORCHSCOPE_SAMPLE_HZ", ""}, {"OMP_NUM_THREADS", "1"}};
  const ProgramOutcome job = runUnderTorchscope(store, {TORCHSCOPE_PYTHON, jobScript(script).string(), steps}, options);
  EXPECT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, "done\n");
  return store;
}

const LineTime* findLine(const LineTable& table, const std::string& script, int line) {
  for (const auto& entry : table.lines) {
    if (entry.line == line && entry.file.ends_with(script)) return &entry;
  }
  return nullptr;
}

// No line of the steps' thread takes more than the time its samples stand for.
void expectSharesWithinTheSampledTime(const LineTable& table) {
  for (const auto& line : table.lines) {
    EXPECT_LE(line.share, line.total_share + 1e-12) << line.file << ":" << line.line;
    EXPECT_LE(line.total_share, 1 + 1e-9) << line.file << ":" << line.line;
    if (table.steps > 0) {
      EXPECT_LE(line.total_per_step_s, table.step_s * (1 + 1e-9)) << line.file << ":" << line.line;
    }
  }
}

TEST(LinesJob, TheLineThatCallsTheUsersOwnFunctionIsListedByItsTotal) {
  TempDir dir;
  const std::string store = record(dir, "make_batch.py", "400");
  const LineTable table = linesOf(store);
  ASSERT_TRUE(table.recorded);
  ASSERT_GT(table.steps, 50);
  const int call = markedLine(jobScript("make_batch.py"), "call");
  const int sum = markedLine(jobScript("make_batch.py"), "sum");
  const LineTime* calling = findLine(table, "make_batch.py", call);
  ASSERT_NE(calling, nullptr) << "the line that calls make_batch() is missing";
  // make_batch() runs Python lines of its own for most of the step: they hold its self time, the call its total.
  EXPECT_GT(calling->total_share, 0.5);
  EXPECT_LT(calling->share, 0.1);
  EXPECT_GT(calling->total_per_step_s, 0.5 * table.step_s);
  const LineTime* summing = findLine(table, "make_batch.py", sum);
  ASSERT_NE(summing, nullptr);
  EXPECT_GT(summing->share, 0.3);
  // The line with the most self time leads the table: the sum inside make_batch().
  EXPECT_EQ(table.lines.front().line, sum);
  expectSharesWithinTheSampledTime(table);

  const ProgramOutcome advice = runTorchscope("advise '" + store + "'");
  ASSERT_EQ(advice.exit_code, 0) << advice.err;
  EXPECT_THAT(advice.out, HasSubstr("make_batch.py:" + std::to_string(call) + " (<module>)"));
  EXPECT_THAT(advice.out, HasSubstr("total %"));
  const ProgramOutcome json = runTorchscope("advise --format json '" + store + "'");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto document = nlohmann::json::parse(json.out, nullptr, false);
  bool listed = false;
  for (const auto& line : document["runs"][0]["lines"]["lines"]) {
    if (line["line"] != call) continue;
    listed = true;
    EXPECT_NEAR(line["total_share"].get<double>(), calling->total_share, 1e-9);
  }
  EXPECT_TRUE(listed) << document["runs"][0]["lines"].dump(1);
}

// 40 steps: a first one of 50 ms, then 39 of a fraction of a millisecond, shorter together than the 10 ms between
// two samples. Whether a sample lands in them is chance: either one does and its 10 ms stand for the first step's
// time too (it made a share of 265 %), or none does and the table takes the whole run, and says why.
TEST(LinesJob, AVeryShortRunSaysWhatItsFewSamplesCover) {
  TempDir dir;
  const std::string store = record(dir, "short_run.py", "40");
  const LineTable table = linesOf(store);
  ASSERT_TRUE(table.recorded);
  ASSERT_GT(table.samples, 0);
  expectSharesWithinTheSampledTime(table);

  const ProgramOutcome advice = runTorchscope("advise '" + store + "'");
  ASSERT_EQ(advice.exit_code, 0) << advice.err;
  EXPECT_THAT(advice.out, HasSubstr("40 steps, steady-state step median"));
  const ProgramOutcome stats = runTorchscope("stats '" + store + "'");
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  for (const std::string& text : {advice.out, stats.out}) {
    EXPECT_THAT(text, Not(HasSubstr("no steady-state steps")));
    if (table.steps > 0) {
      EXPECT_THAT(text, HasSubstr("per step over the " + std::to_string(table.steps) + " steady-state step(s)"));
    } else {
      // At most 39: the first step is warm-up, and the steps the op census counted are not steady either.
      EXPECT_GT(table.unsampled_steady_steps, 0);
      EXPECT_LE(table.unsampled_steady_steps, 39);
      EXPECT_THAT(text, HasSubstr("over the whole run (no sample landed in its " +
                                  std::to_string(table.unsampled_steady_steps) + " steady-state step(s))"));
    }
    if (table.samples < 16) {
      EXPECT_THAT(text, HasSubstr("too few for the shares to mean much"));
    }
  }
}

}  // namespace
}  // namespace torchscope::analyzer::testing
