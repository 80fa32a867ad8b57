// The line table (host time by line of the user's code) from a fixture store with stack samples: its figures, and
// its text, JSON and Markdown against golden/lines/ (TORCHSCOPE_UPDATE_GOLDEN=1 rewrites them).
#include <gmock/gmock.h>

#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/LineTable.h"
#include "torchscope/analyzer/Report.h"

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
  ASSERT_EQ(table.lines.size(), 4u);
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
  // The steps' figures add up: the main thread's sampled time is its steps' time.
  double main_thread = 0;
  for (const auto& line : table.lines) main_thread += line.file == "/job/train.py" ? line.self_per_step_s : 0;
  EXPECT_NEAR(main_thread, table.step_s, 1e-9);
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
  EXPECT_EQ(json["runs"][0]["lines"]["lines"].size(), 4u);
  auto clean = analyze({fixtureStore(dir, "clean")});
  ASSERT_TRUE(clean.ok());
  EXPECT_THAT(render(*clean, Format::kText), Not(HasSubstr("Time by line")));
  EXPECT_FALSE(nlohmann::json::parse(render(*clean, Format::kJson))["runs"][0].contains("lines"));
  EXPECT_EQ(renderLines(clean->runs.front().lines, Format::kText), "");
}

}  // namespace
}  // namespace torchscope::analyzer::testing
