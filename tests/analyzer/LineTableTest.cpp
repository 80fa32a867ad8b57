// The line table (host time by line of the user's code) from a fixture store with stack samples: its figures, and
// its text, JSON and Markdown against golden/lines/ (TORCHSCOPE_UPDATE_GOLDEN=1 rewrites them).
#include <gmock/gmock.h>

#include <filesystem>
#include <set>

#include "SampledStore.h"
#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/FlameGraph.h"
#include "torchscope/analyzer/LineTable.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/store/Writer.h"

namespace torchscope::analyzer::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void expectLinesMatchGolden(const std::string& actual, const std::string& file_name) {
  expectMatchesTextGolden(actual, goldenDir() / "lines" / file_name);
}

LineTable sampledLines(const TempDir& dir) {
  auto reader = store::Reader::open(fixtureStore(dir, "sampled_lines"));
  EXPECT_TRUE(reader.ok());
  if (!reader.ok()) return {};
  auto table = lineTable(**reader);
  EXPECT_TRUE(table.ok()) << (table.ok() ? "" : table.error().message);
  return table.ok() ? *table : LineTable{};
}

TEST(LineTable, SelfAndTotalPerSteadyStep) {
  TempDir dir;
  const LineTable table = sampledLines(dir);
  ASSERT_TRUE(table.recorded);
  // Ten steps, the first one dropped as warm-up: nine steady steps of 100 ms, two threads.
  EXPECT_EQ(table.steps, 9);
  EXPECT_EQ(table.threads, 2);
  EXPECT_EQ(table.samples, 9 * 20);
  EXPECT_NEAR(table.step_s, 0.1, 1e-9);
  // Four lines with self time, then the loader's thread's run() (under no root of the fixture's: the user's), which
  // calls the loader's line and is listed for its total alone.
  ASSERT_EQ(table.lines.size(), 5u);
  // The loader's line, then the model call (torch's frame below it counts as the line's own time).
  EXPECT_EQ(table.lines[0].file, "/job/data.py");
  EXPECT_NEAR(table.lines[0].self_per_step_s, 0.1, 1e-9);
  EXPECT_EQ(table.lines[0].self_cpu_s, -1);
  EXPECT_EQ(table.lines[1].line, 12);
  EXPECT_NEAR(table.lines[1].self_per_step_s, 0.06, 1e-9);
  EXPECT_NEAR(table.lines[1].share, 0.6, 1e-9);
  EXPECT_NEAR(table.lines[1].self_cpu_s, 9 * 0.055, 1e-9);
  EXPECT_EQ(table.lines[2].line, 14);
  // The loop's line: 10 ms of its own, and every main-thread sample below it.
  EXPECT_EQ(table.lines[3].line, 20);
  EXPECT_NEAR(table.lines[3].self_per_step_s, 0.01, 1e-9);
  EXPECT_NEAR(table.lines[3].total_per_step_s, 0.1, 1e-9);
  EXPECT_EQ(table.lines[4].file, "/usr/lib/python3.11/threading.py");
  EXPECT_EQ(table.lines[4].self_samples, 0);
  EXPECT_NEAR(table.lines[4].total_share, 1.0, 1e-9);
  // The steps' figures add up: the main thread's sampled time is its steps' time.
  double main_thread = 0;
  for (const auto& line : table.lines) main_thread += line.file == "/job/train.py" ? line.self_per_step_s : 0;
  EXPECT_NEAR(main_thread, table.step_s, 1e-9);
}

// Five 100 ms steps on thread 1, which waits 40 ms of each on a queue (no CPU); thread 2 computes 30 ms of each;
// thread 3 waits all along (a compile worker: 0.5 ms of CPU over its 100 ms) and thread 4's CPU time is unknown.
TEST(LineTable, IdleThreadsOtherThanTheStepsAreLeftOut) {
  TempDir dir;
  const std::string path = dir.file("idle.db");
  {
    auto opened = store::Writer::open(path);
    ASSERT_TRUE(opened.ok());
    store::Writer& writer = **opened;
    writeSampledRunAndSteps(writer, "/job");
    for (std::int64_t line = 1; line <= 5; ++line) writer.add(store::StackFrame{line, "/job/train.py", line, "f"});
    for (std::int64_t stack = 1; stack <= 5; ++stack) writer.add(store::Stack{stack, -1, stack});
    for (std::int64_t step = 1; step < 5; ++step) {
      writer.add(store::StackSample{1, 1, step, 1, 6, 60 * kSampledMs, 60 * kSampledMs});  // the step's work
      writer.add(store::StackSample{1, 1, step, 2, 4, 40 * kSampledMs, 0});                // its wait: kept
      writer.add(store::StackSample{1, 2, step, 3, 3, 30 * kSampledMs, 30 * kSampledMs});
      writer.add(store::StackSample{1, 3, step, 4, 10, 100 * kSampledMs, kSampledMs / 2});  // idle: left out
      writer.add(store::StackSample{1, 4, step, 5, 1, 10 * kSampledMs, -1});                // unknown: kept
    }
    ASSERT_TRUE(writer.close(kSampledStart + 5 * kSampledStep).ok());
  }
  auto reader = store::Reader::open(path);
  ASSERT_TRUE(reader.ok());
  auto table = lineTable(**reader);
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ(table->steps, 4);
  EXPECT_EQ(table->threads, 3);
  EXPECT_EQ(table->samples, 4 * (6 + 4 + 3 + 1));
  EXPECT_EQ(table->idle_samples, 4 * 10);
  EXPECT_NEAR(table->idle_s, 0.4, 1e-9);
  EXPECT_NEAR(table->sampled_s, 4 * 0.14, 1e-9);
  std::set<std::int64_t> lines;
  for (const auto& line : table->lines) lines.insert(line.line);
  EXPECT_EQ(lines, (std::set<std::int64_t>{1, 2, 3, 5}));
  EXPECT_THAT(renderLines(*table, Format::kText), HasSubstr("40 sample(s) of idle threads left out"));
}

const LineTime* findLine(const LineTable& table, std::int64_t line) {
  for (const auto& entry : table.lines) {
    if (entry.line == line) return &entry;
  }
  return nullptr;
}

// Per steady step of 100 ms: the loop's line 20 calls make_batch(), whose lines 101-112 take 12, 11, ..., 1 ms (78 ms
// in all), and the loop's line 22 takes the other 22 ms.
TEST(LineTable, ALineThatCallsTheUsersFunctionIsListedByItsTotal) {
  TempDir dir;
  const std::string path = dir.file("call.db");
  {
    auto opened = store::Writer::open(path);
    ASSERT_TRUE(opened.ok());
    store::Writer& writer = **opened;
    writeSampledRunAndSteps(writer, "/job");
    writer.add(store::StackFrame{1, "/job/train.py", 20, "<module>"});
    writer.add(store::StackFrame{2, "/job/train.py", 22, "<module>"});
    writer.add(store::Stack{1, -1, 1});
    writer.add(store::Stack{2, -1, 2});
    for (std::int64_t k = 0; k < 12; ++k) {
      writer.add(store::StackFrame{10 + k, "/job/train.py", 101 + k, "make_batch"});
      writer.add(store::Stack{10 + k, 1, 10 + k});
    }
    for (std::int64_t step = 1; step < 5; ++step) {
      for (std::int64_t k = 0; k < 12; ++k) {
        writer.add(store::StackSample{1, 1, step, 10 + k, 1, (12 - k) * kSampledMs, (12 - k) * kSampledMs});
      }
      writer.add(store::StackSample{1, 1, step, 2, 2, 22 * kSampledMs, 22 * kSampledMs});
    }
    ASSERT_TRUE(writer.close(kSampledStart + 5 * kSampledStep).ok());
  }
  auto reader = store::Reader::open(path);
  ASSERT_TRUE(reader.ok());
  auto table = lineTable(**reader);
  ASSERT_TRUE(table.ok()) << table.error().message;
  // The ten with the most self time (line 22, then make_batch's 101 to 109), then the call, listed by its total.
  ASSERT_EQ(table->lines.size(), kTopLines + 1);
  EXPECT_EQ(table->lines.front().line, 22);
  EXPECT_EQ(table->lines[kTopLines - 1].line, 109);
  const LineTime& call = table->lines.back();
  EXPECT_EQ(call.line, 20);
  EXPECT_EQ(call.self_samples, 0);
  EXPECT_EQ(call.total_samples, 4 * 12);
  EXPECT_NEAR(call.total_share, 0.78, 1e-9);
  EXPECT_NEAR(call.total_per_step_s, 0.078, 1e-9);
  EXPECT_EQ(findLine(*table, 110), nullptr);
  const std::string text = renderLines(*table, Format::kText);
  EXPECT_THAT(text, HasSubstr(" 0.0%    78.0%        0/48  /job/train.py:20 (<module>)")) << text;
  EXPECT_THAT(renderLines(*table, Format::kMarkdown), HasSubstr("| 0.0 % | 78.0 % | 0/48 |"));
  const auto json = nlohmann::json::parse(renderLines(*table, Format::kJson));
  EXPECT_EQ(json["lines"].back()["total_share"], call.total_share);
  EXPECT_EQ(json["lines"].back()["share"], 0.0);
}

// 40 steps back to back on thread 1: a first one of 50 ms, then 39 of 0.1 ms. `sampled_step`: the step whose end
// holds the run's one sample of 10 ms, which reaches back into the first step (the sampler took one every 10 ms).
std::string writeShortRun(const TempDir& dir, std::int64_t sampled_step) {
  const std::string path = dir.file("short" + std::to_string(sampled_step) + ".db");
  auto opened = store::Writer::open(path);
  EXPECT_TRUE(opened.ok());
  if (!opened.ok()) return path;
  store::Writer& writer = **opened;
  store::RunInfo run;
  run.command_line = "python short.py";
  run.start_ns = kSampledStart;
  run.source = "collector";
  writer.setRun(run);
  writer.add(store::RunAttribute{"code.user_roots", "[\"/job\"]"});
  base::Nanos start = kSampledStart;
  for (std::int64_t index = 0; index < 40; ++index) {
    const base::Nanos end = start + (index == 0 ? 50 * kSampledMs : kSampledMs / 10);
    writer.add(store::Step{1, 1, index, start, end, "optimizer"});
    start = end;
  }
  writer.add(store::StackFrame{1, "/job/short.py", 10, "<module>"});
  writer.add(store::Stack{1, -1, 1});
  writer.add(store::StackSample{1, 1, sampled_step, 1, 1, 10 * kSampledMs, 10 * kSampledMs});
  EXPECT_TRUE(writer.close(start).ok());
  return path;
}

// A sample stands for more than the 39 fast steps' own time (3.9 ms): the shares' base is the time it stands for.
TEST(LineTable, ASampleLongerThanTheStepsTakesNoMoreThanItsOwnTime) {
  TempDir dir;
  auto reader = store::Reader::open(writeShortRun(dir, 5));
  ASSERT_TRUE(reader.ok());
  auto table = lineTable(**reader);
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ(table->steps, 39);
  EXPECT_NEAR(table->step_s, 1e-4, 1e-12);
  EXPECT_NEAR(table->base_s, 0.01, 1e-12);
  ASSERT_EQ(table->lines.size(), 1u);
  EXPECT_NEAR(table->lines[0].share, 1.0, 1e-9);
  EXPECT_NEAR(table->lines[0].self_per_step_s, 1e-4, 1e-12);
  const std::string text = renderLines(*table, Format::kText);
  EXPECT_THAT(text, HasSubstr("per step over the 39 steady-state step(s) of 0.10 ms on average"));
  EXPECT_THAT(text, HasSubstr("only 1 sample(s): too few for the shares to mean much (±98 points"));
  EXPECT_THAT(text, HasSubstr("100.0%   100.0%         1/1  /job/short.py:10"));
}

// The one sample is in the first step: the table and the flame graph take the whole run, and say why.
TEST(LineTable, NoSampleInTheSteadyStepsSaysSoBesideTheStepSummary) {
  TempDir dir;
  const std::string path = writeShortRun(dir, 0);
  auto reader = store::Reader::open(path);
  ASSERT_TRUE(reader.ok());
  auto table = lineTable(**reader);
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ(table->steps, 0);
  EXPECT_EQ(table->unsampled_steady_steps, 39);
  ASSERT_EQ(table->lines.size(), 1u);
  EXPECT_NEAR(table->lines[0].share, 1.0, 1e-9);
  EXPECT_NEAR(table->lines[0].self_per_step_s, 0.01, 1e-12);  // the run's
  const std::string why = "the whole run (no sample landed in its 39 steady-state step(s))";
  EXPECT_THAT(renderLines(*table, Format::kText), HasSubstr("over " + why));
  EXPECT_EQ(nlohmann::json::parse(renderLines(*table, Format::kJson))["unsampled_steady_steps"], 39);
  auto flame = flameGraph(**reader);
  ASSERT_TRUE(flame.ok());
  EXPECT_EQ(flame->steps, 0);
  EXPECT_EQ(flame->unsampled_steady_steps, 39);
  auto analysis = analyze({path});
  ASSERT_TRUE(analysis.ok());
  const std::string text = render(*analysis, Format::kText);
  EXPECT_THAT(text, HasSubstr("40 steps, steady-state step median 0.10 ms"));
  EXPECT_THAT(text, HasSubstr(why));
  EXPECT_THAT(text, Not(HasSubstr("no steady-state steps")));
  EXPECT_THAT(render(*analysis, Format::kHtml), HasSubstr("over " + why));
}

TEST(LineTable, TextJsonAndMarkdownMatchTheirGoldens) {
  TempDir dir;
  const LineTable table = sampledLines(dir);
  RenderOptions options;
  options.current_directory = "/job";
  expectLinesMatchGolden(renderLines(table, Format::kText, options), "sampled_lines.txt");
  expectLinesMatchGolden(renderLines(table, Format::kJson, options), "sampled_lines.json");
  expectLinesMatchGolden(renderLines(table, Format::kMarkdown, options), "sampled_lines.md");
}

TEST(LineTable, AdviseShowsItOnlyForARunWithSamples) {
  TempDir dir;
  auto sampled = analyze({fixtureStore(dir, "sampled_lines")});
  ASSERT_TRUE(sampled.ok());
  EXPECT_THAT(render(*sampled, Format::kText), HasSubstr("Time by line of your code"));
  EXPECT_THAT(render(*sampled, Format::kMarkdown), HasSubstr("### Time by line of your code"));
  const auto json = nlohmann::json::parse(render(*sampled, Format::kJson));
  EXPECT_EQ(json["runs"][0]["lines"]["lines"].size(), 5u);
  auto clean = analyze({fixtureStore(dir, "clean")});
  ASSERT_TRUE(clean.ok());
  EXPECT_THAT(render(*clean, Format::kText), Not(HasSubstr("Time by line")));
  EXPECT_FALSE(nlohmann::json::parse(render(*clean, Format::kJson))["runs"][0].contains("lines"));
  EXPECT_EQ(renderLines(clean->runs.front().lines, Format::kText), "");
}

// A job's ranks or DataLoader workers each have a table: each says whose it is.
TEST(LineTable, EachRunsTableIsNamedWhenTheReportCoversSeveral) {
  TempDir dir;
  const std::string main_store = fixtureStore(dir, "sampled_lines");
  const std::string worker_store = dir.file("worker.db");
  std::filesystem::copy_file(main_store, worker_store);
  auto both = analyze({main_store, worker_store});
  ASSERT_TRUE(both.ok());
  const std::string text = render(*both, Format::kText);
  EXPECT_THAT(text, HasSubstr("Time by line of your code in " + both->runs[0].path + " (sampled)"));
  EXPECT_THAT(text, HasSubstr("Time by line of your code in " + both->runs[1].path + " (sampled)"));
  EXPECT_THAT(render(*both, Format::kMarkdown), HasSubstr("### Time by line of your code in "));
}

}  // namespace
}  // namespace torchscope::analyzer::testing
