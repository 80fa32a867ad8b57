// What a person reads first: the text report's opening sentence, whose figures are the findings' own, and paths
// relative to the current directory or the job's folder (golden/text/*.txt; TORCHSCOPE_UPDATE_GOLDEN=1 rewrites them).
#include <fmt/format.h>
#include <gmock/gmock.h>

#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Compare.h"
#include "torchscope/analyzer/Report.h"

namespace torchscope::analyzer::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The analysis of fixtures/cpu_overview.json, its store named as a user would have named it (not the temp dir's).
Analysis cpuOverview(const TempDir& dir) {
  auto analysis = analyze({fixtureStore(dir, "cpu_overview")});
  EXPECT_TRUE(analysis.ok()) << (analysis.ok() ? "" : analysis.error().message);
  if (!analysis.ok()) return {};
  analysis->runs.front().path = "run.db";
  return *analysis;
}

TEST(ReadableReport, TextFromTheJobsFolderShowsItsPathsRelative) {
  TempDir dir;
  RenderOptions options;
  options.current_directory = "/work/proj";
  const std::string text = render(cpuOverview(dir), Format::kText, options);
  EXPECT_THAT(text, Not(HasSubstr("/work/proj/")));
  expectMatchesTextGolden(text, goldenDir() / "text" / "cpu_overview.txt");
}

TEST(ReadableReport, TextFromElsewhereNamesTheJobsFolderOnce) {
  TempDir dir;
  RenderOptions options;
  options.current_directory = "/home/someone";
  const std::string text = render(cpuOverview(dir), Format::kText, options);
  EXPECT_THAT(text, HasSubstr("model.py:41"));
  EXPECT_THAT(text, HasSubstr("paths of the job's files are relative to its folder /work/proj\n"));
  std::size_t mentions = 0;
  for (auto at = text.find("/work/proj"); at != std::string::npos; at = text.find("/work/proj", at + 1)) ++mentions;
  EXPECT_EQ(mentions, 1u) << text;
}

TEST(ReadableReport, AbsolutePathsWhenAskedAndInTheJsonReport) {
  TempDir dir;
  const Analysis analysis = cpuOverview(dir);
  RenderOptions options;
  options.current_directory = "/work/proj";
  options.absolute_paths = true;
  EXPECT_THAT(render(analysis, Format::kText, options), HasSubstr("/work/proj/model.py:41"));
  options.absolute_paths = false;
  EXPECT_THAT(render(analysis, Format::kJson, options), HasSubstr("\"/work/proj/model.py\""));
  EXPECT_THAT(render(analysis, Format::kSarif, options), HasSubstr("file:///work/proj/model.py"));
}

TEST(ReadableReport, OnlyAPathThatStartsInTheFolderIsShortened) {
  Analysis analysis;
  analysis.runs.emplace_back();
  Finding finding;
  finding.rule = "sync/item";
  finding.title = "at /work/proj/a.py and /x/work/proj/b.py and /work/project/c.py";
  analysis.findings.push_back(finding);
  RenderOptions options;
  options.current_directory = "/work/proj/";
  EXPECT_THAT(render(analysis, Format::kText, options),
              HasSubstr("at a.py and /x/work/proj/b.py and /work/project/c.py"));
}

// The opening sentence's figures are those of the findings listed under it.
TEST(ReadableReport, OpeningSentenceAddsUpWithTheFindings) {
  TempDir dir;
  const Analysis analysis = cpuOverview(dir);
  const std::string text = render(analysis, Format::kText);
  const std::string first = text.substr(0, text.find('\n'));
  const Finding* compile = nullptr;
  const Finding* recompile = nullptr;
  for (const auto& finding : analysis.findings) {
    if (finding.rule == "compile/time") compile = &finding;
    if (finding.rule.family() == "recompile" && recompile == nullptr) recompile = &finding;
  }
  ASSERT_NE(compile, nullptr);
  ASSERT_NE(recompile, nullptr);
  EXPECT_THAT(first, HasSubstr(fmt::format("{:.1f} % of this {:.2f} s run was torch.compile compiling ({:.2f} s)",
                                           compile->impact_fraction * 100, analysis.runs.front().duration_s,
                                           compile->impact_seconds)));
  EXPECT_THAT(first, HasSubstr(fmt::format("; {:.1f} % of that: {}", recompile->impact_seconds / compile->impact_seconds * 100,
                                           recompile->title)));
  // The list under it shows the same impact.
  EXPECT_THAT(text, HasSubstr(fmt::format("impact {:.3f} s ({:.1f} % of the run)", compile->impact_seconds,
                                          compile->impact_fraction * 100)));
}

TEST(ReadableReport, OpeningSentenceWithoutFindings) {
  TempDir dir;
  auto analysis = analyze({fixtureStore(dir, "clean")});
  ASSERT_TRUE(analysis.ok());
  EXPECT_THAT(render(*analysis, Format::kText), ::testing::StartsWith("Nothing in this "));
}

// A finding's title continues the opening sentence after its colon: "the code compiled ...", but "GPU ..." stays.
TEST(ReadableReport, OpeningSentenceContinuesWithTheTitleInLowerCaseExceptAcronyms) {
  TempDir dir;
  Analysis analysis = cpuOverview(dir);
  ASSERT_FALSE(analysis.findings.empty());
  Finding* recompile = nullptr;
  for (auto& finding : analysis.findings) {
    if (finding.rule.family() == "recompile" && recompile == nullptr) recompile = &finding;
  }
  ASSERT_NE(recompile, nullptr);
  recompile->title = "The code compiled at train.py:4 recompiled once for new input sizes";
  std::string text = render(analysis, Format::kText);
  EXPECT_THAT(text.substr(0, text.find('\n')), HasSubstr("of that: the code compiled at train.py:4 recompiled once"));
  recompile->title = "GPU idle between the code compiled at train.py:4 and the next step";
  text = render(analysis, Format::kText);
  EXPECT_THAT(text.substr(0, text.find('\n')), HasSubstr("of that: GPU idle between"));
}

// The fix command's report goes through the same rule: a path that starts with the folder, not one that contains it.
TEST(ReadableReport, PathsRelativeToAFolderShortenOnlyPathsStartingThere) {
  EXPECT_EQ(pathsRelativeTo("finding: recompile/dynamic-shape at /work/proj/baseline.py:28, 32.2 % of the run",
                            "/work/proj/"),
            "finding: recompile/dynamic-shape at baseline.py:28, 32.2 % of the run");
  EXPECT_EQ(pathsRelativeTo("at /x/work/proj/a.py:1 and /work/project/b.py:2", "/work/proj"),
            "at /x/work/proj/a.py:1 and /work/project/b.py:2");
  EXPECT_EQ(pathsRelativeTo("at /a.py:1", "/"), "at /a.py:1");
}

// compile/time's impact is the compile time its title states, also when every cache lookup hit.
TEST(ReadableReport, CompileTimeImpactIsTheCompileTimeItStates) {
  TempDir dir;
  const Analysis analysis = cpuOverview(dir);
  for (const auto& finding : analysis.findings) {
    if (finding.rule != "compile/time") continue;
    EXPECT_THAT(finding.title, HasSubstr(fmt::format("({:.2f} s)", finding.impact_seconds)));
    EXPECT_THAT(finding.title, HasSubstr(fmt::format("{:.1f} %", finding.impact_fraction * 100)));
    return;
  }
  FAIL() << "no compile/time finding";
}

// compare's reports name the runs and new problems by paths relative to the current directory too.
TEST(ReadableReport, ComparisonShowsPathsUnderTheCurrentDirectoryRelative) {
  Comparison comparison;
  comparison.base_path = "/work/proj/runs/base.db";
  comparison.new_path = "/work/proj/runs/new.db";
  comparison.new_problems.push_back({"recompile", "/work/proj/model.py", 37, "forward", "dynamic-shape", 2});
  RenderOptions options;
  options.current_directory = "/work/proj";
  for (const Format format : {Format::kText, Format::kMarkdown, Format::kHtml, Format::kJunit}) {
    const std::string report = renderComparison(comparison, format, options);
    EXPECT_THAT(report, Not(HasSubstr("/work/proj"))) << report;
    EXPECT_THAT(report, HasSubstr("model.py:37")) << report;
  }
  EXPECT_THAT(renderComparison(comparison, Format::kJson, options), HasSubstr("/work/proj/model.py"));
  options.absolute_paths = true;
  EXPECT_THAT(renderComparison(comparison, Format::kText, options), HasSubstr("/work/proj/model.py:37"));
}

}  // namespace
}  // namespace torchscope::analyzer::testing
