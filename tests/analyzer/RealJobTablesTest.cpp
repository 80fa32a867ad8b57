// The line and region tables of real jobs, recorded once with the stack sampler at 100 Hz (tests/analyzer/real/,
// record.sh says how): an eager LSTM language model with a manual SGD update, the RDL sample written for
// torch.compile, a compiled transformer block, and a tiny compiled model run for six steps (with its run with
// compilation off, where compiling does not pay), and the RDL sample's profile by `torchscope demo`, whose graph break
// costs what it causes. Their text and JSON against golden/real/ (TORCHSCOPE_UPDATE_GOLDEN=1
// rewrites them), and their figures adding up: the lines' self times to the sampled time and the steps, the regions'
// run times to the steps, their compile times to the run's.
#include <filesystem>
#include <fstream>
#include <vector>

#include <zlib.h>

#include "LineTableOf.h"
#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/LineTable.h"
#include "torchscope/analyzer/Regions.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/store/Reader.h"

namespace torchscope::analyzer::testing {
namespace {

// The rate the stores were recorded at: a sample is credited with the time since the previous one, so a step's
// sampled time is its own within about one period at either end.
constexpr double kSamplePeriodS = 0.01;
// Where the jobs ran when they were recorded: reports show their files relative to it.
constexpr const char* kRecordedRoot = "/work/wt-sampler";

std::filesystem::path realDir() { return sourcePath("tests/analyzer/real"); }

// The recorded store, unpacked (they are committed gzipped: about a fifth of their size).
std::string storeCopy(const TempDir& dir, const std::string& name) {
  const std::string copy = dir.file(name + ".db");
  const std::string packed = (realDir() / (name + ".db.gz")).string();
  gzFile in = gzopen(packed.c_str(), "rb");
  EXPECT_NE(in, nullptr) << packed;
  if (in == nullptr) return copy;
  std::ofstream out(copy, std::ios::binary | std::ios::trunc);
  std::vector<char> buffer(1 << 16);
  int read = 0;
  while ((read = gzread(in, buffer.data(), static_cast<unsigned>(buffer.size()))) > 0) out.write(buffer.data(), read);
  EXPECT_EQ(read, 0) << packed << " is damaged";
  gzclose(in);
  return copy;
}

void expectRealGolden(const std::string& actual, const std::string& file_name) {
  expectMatchesTextGolden(actual, goldenDir() / "real" / file_name);
}

RenderOptions recordedPaths() {
  RenderOptions options;
  options.current_directory = kRecordedRoot;
  return options;
}

RegionTable regionsOf(const TempDir& dir, const std::string& name, const std::string& against = "") {
  auto table = regionTable(storeCopy(dir, name), against.empty() ? "" : storeCopy(dir, against));
  EXPECT_TRUE(table.ok()) << (table.ok() ? "" : table.error().message);
  if (!table.ok()) return {};
  // The copies' paths change from run to run; the goldens name the recorded stores.
  table->path = name + ".db";
  if (!against.empty()) table->against = against + ".db";
  return *table;
}

// The lines' self times are the sampled time with a user line on the stack (all of it when the table lists every
// line), within the sampled time; per step they add up to at most the steps' time on each sampled thread.
void checkLineSums(const LineTable& table) {
  ASSERT_TRUE(table.recorded);
  ASSERT_FALSE(table.lines.empty());
  double self_s = 0;
  double self_per_step_s = 0;
  std::int64_t self_samples = 0;
  std::size_t self_lines = 0;
  for (const auto& line : table.lines) {
    EXPECT_GE(line.total_s, line.self_s - 1e-12) << line.file << ":" << line.line;
    EXPECT_GE(line.total_samples, line.self_samples) << line.file << ":" << line.line;
    EXPECT_LE(line.total_share, 1 + 1e-9) << line.file << ":" << line.line;
    self_s += line.self_s;
    self_per_step_s += line.self_per_step_s;
    self_samples += line.self_samples;
    self_lines += line.self_samples > 0 ? 1 : 0;
  }
  EXPECT_LE(self_samples, table.samples);
  EXPECT_LE(self_s, table.user_s * (1 + 1e-9));
  EXPECT_LE(table.user_s, table.sampled_s * (1 + 1e-9));
  EXPECT_LE(table.base_s, table.sampled_s * (1 + 1e-9));
  if (self_lines < kTopLines) {  // every line with self time is listed
    EXPECT_NEAR(self_s, table.user_s, 1e-9 * table.user_s);
  }
  if (table.steps > 0) {  // a line's time per step is its share of the mean step
    EXPECT_NEAR(self_per_step_s, self_s / table.base_s * table.step_s, 1e-9);
    EXPECT_LE(self_per_step_s, static_cast<double>(table.threads) * table.step_s * (1 + 1e-9));
  }
}

// A job of one Python thread: its sampled time per steady step is the step, within a sample period either end.
void checkOneThreadCoversItsSteps(const LineTable& table) {
  ASSERT_EQ(table.threads, 1);
  ASSERT_GT(table.steps, 0);
  EXPECT_NEAR(table.sampled_s / static_cast<double>(table.steps), table.step_s, 2 * kSamplePeriodS);
  double share = 0;
  for (const auto& line : table.lines) share += line.share;
  EXPECT_NEAR(share, table.user_s / table.sampled_s, 2 * kSamplePeriodS / table.step_s);
}

// The wall time of the run's steps, summed.
double stepsTotalSeconds(const std::string& store) {
  auto reader = store::Reader::open(store);
  EXPECT_TRUE(reader.ok()) << store;
  if (!reader.ok()) return 0;
  auto steps = (*reader)->load<store::Step>();
  EXPECT_TRUE(steps.ok());
  double total = 0;
  if (steps.ok()) {
    for (const auto& step : *steps) total += static_cast<double>(step.end_ns - step.start_ns) * 1e-9;
  }
  return total;
}

// Every compilation is in one row; torch's stage times lie within it. A region's calls in the steady steps (those steps
// compile nothing), at its time per call, make its time in those steps, and all regions' calls fit in the steps.
void checkRegionSums(const RegionTable& table, double steps_total_s) {
  ASSERT_FALSE(table.regions.empty());
  double compile_s = 0;
  double run_wall_s = 0;
  double share = 0;
  for (const auto& region : table.regions) {
    SCOPED_TRACE(region.name);
    compile_s += region.compile_s;
    EXPECT_LE(region.dynamo_s + region.aot_s + region.inductor_s, region.compile_s * 1.05);
    if (region.calls < 0) continue;
    EXPECT_LE(region.compile_calls, region.calls);
    EXPECT_LE(region.steady_calls, region.calls - region.compile_calls);
    if (region.steady_calls > 0) {  // per call: the calls in the steady-state steps, their share of those steps
      EXPECT_NEAR(region.wall_per_call_s * static_cast<double>(region.steady_calls),
                  region.steady_share * table.steady_total_s, 1e-9 + 1e-9 * region.run_wall_s);
    } else {
      const double timed_calls = static_cast<double>(region.calls - region.compile_calls);
      EXPECT_NEAR(region.wall_per_call_s * timed_calls, region.run_wall_s, 1e-9 + 1e-9 * region.run_wall_s);
    }
    run_wall_s += region.run_wall_s;
    if (region.steady_share >= 0) {
      share += region.steady_share;
      EXPECT_LE(region.steady_share * table.steady_total_s, region.run_wall_s * (1 + 1e-9));
    }
  }
  EXPECT_LE(run_wall_s, steps_total_s);
  EXPECT_LE(table.steady_total_s, steps_total_s * (1 + 1e-9));
  EXPECT_NEAR(compile_s, table.regions_compile_s, 1e-9 * compile_s);
  EXPECT_NEAR(table.regions_compile_s, table.compile_s, 0.02 * table.compile_s);
  EXPECT_LE(share, 1.0 + 1e-9);
  EXPECT_GT(table.steady_steps, 0);
  EXPECT_LE(table.steady_steps, table.steps);
}

void expectGoldens(const RegionTable& regions, const LineTable& lines, const std::string& name) {
  expectRealGolden(renderRegions(regions, Format::kText, recordedPaths()), name + ".regions.txt");
  expectRealGolden(renderRegions(regions, Format::kJson, recordedPaths()), name + ".regions.json");
  expectRealGolden(renderLines(lines, Format::kText, recordedPaths()), name + ".lines.txt");
  expectRealGolden(renderLines(lines, Format::kJson, recordedPaths()), name + ".lines.json");
}

TEST(RealJobTables, EagerLstmWithAManualUpdate) {
  TempDir dir;
  const LineTable lines = linesOf(storeCopy(dir, "lstm_lm"));
  checkLineSums(lines);
  checkOneThreadCoversItsSteps(lines);
  // Eager: nothing compiled, no region.
  const RegionTable regions = regionsOf(dir, "lstm_lm");
  EXPECT_TRUE(regions.regions.empty());
  EXPECT_EQ(regions.compile_s, 0);
  expectRealGolden(renderLines(lines, Format::kText, recordedPaths()), "lstm_lm.lines.txt");
  expectRealGolden(renderLines(lines, Format::kJson, recordedPaths()), "lstm_lm.lines.json");
}

TEST(RealJobTables, RdlSampleCompiled) {
  TempDir dir;
  const RegionTable regions = regionsOf(dir, "rdl_tuned");
  checkRegionSums(regions, stepsTotalSeconds(storeCopy(dir, "rdl_tuned")));
  const LineTable lines = linesOf(storeCopy(dir, "rdl_tuned"));
  checkLineSums(lines);
  expectGoldens(regions, lines, "rdl_tuned");
}

TEST(RealJobTables, CompiledTransformerBlock) {
  TempDir dir;
  const RegionTable regions = regionsOf(dir, "transformer");
  checkRegionSums(regions, stepsTotalSeconds(storeCopy(dir, "transformer")));
  EXPECT_EQ(regions.regions.size(), 2u);
  const LineTable lines = linesOf(storeCopy(dir, "transformer"));
  checkLineSums(lines);
  expectGoldens(regions, lines, "transformer");
}

TEST(RealJobTables, TinyModelWhereCompilingDoesNotPay) {
  TempDir dir;
  const RegionTable regions = regionsOf(dir, "tiny_compiled", "tiny_eager");
  checkRegionSums(regions, stepsTotalSeconds(storeCopy(dir, "tiny_compiled")));
  ASSERT_TRUE(regions.compared);
  // Six steps of a few hundred microseconds never repay seconds of compiling.
  EXPECT_LT(regions.saved_s, regions.compile_s);
  for (const auto& region : regions.regions) EXPECT_LT(region.saved_s, region.compile_s) << region.name;
  const LineTable lines = linesOf(storeCopy(dir, "tiny_compiled"));
  checkLineSums(lines);
  expectGoldens(regions, lines, "tiny_compiled");
}

// The RDL sample's data-dependent break (model.py:41) as `torchscope demo --profile-only` recorded it: it costs every
// compilation it causes, summed here from the store's own rows: the compiles that broke there (their share), every
// resume function at the line with its recompiles, and the frame torch could not resume after it (model.py:99, which
// broke in a dict comprehension). That is more than the resume functions alone, and ranks the fix above dynamic-shapes
// in the demo's list (what measuring it showed: docs/performance.md).
TEST(RealJobTables, RdlBreakCostsTheCompilationsItCauses) {
  TempDir dir;
  const std::string store = storeCopy(dir, "rdl_demo");
  auto reader = store::Reader::open(store);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  const auto secondsOf = [&](const std::string& sql) {
    double seconds = -1;
    auto done = (*reader)->query(sql, [&](const store::Row& row) { seconds = row.real(0) / 1e9; });
    EXPECT_TRUE(done.ok()) << sql;
    return seconds;
  };
  const std::string break_share =
      "SELECT total((c.end_ns - c.start_ns) * 1.0 / (SELECT count(*) FROM graph_breaks o WHERE o.pid = b.pid AND "
      "o.frame_id = b.frame_id AND o.frame_compile_id = b.frame_compile_id)) FROM graph_breaks b JOIN compiles c ON "
      "c.pid = b.pid AND c.frame_id = b.frame_id AND c.frame_compile_id = b.frame_compile_id WHERE ";
  const double broken_s = secondsOf(break_share + "b.line = 41 AND b.frame_skipped = 0");
  const double fallback_s = secondsOf(break_share + "b.line = 99 AND b.frame_skipped = 1");
  const double resume_s =
      secondsOf("SELECT total(end_ns - start_ns) FROM compiles WHERE co_name = 'torch_dynamo_resume_in_forward_at_41'");
  ASSERT_GT(broken_s, 0);
  ASSERT_GT(fallback_s, 0);
  ASSERT_GT(resume_s, 0);

  auto analysis = analyze({store});
  ASSERT_TRUE(analysis.ok()) << analysis.error().message;
  const Finding* branch = nullptr;
  const Finding* dynamic_shapes = nullptr;
  for (const Finding& finding : analysis->findings) {
    if (finding.rule == "graph-break/data-dependent-branch" && finding.line == 41) branch = &finding;
    if (finding.fix_id == "dynamic-shapes") dynamic_shapes = &finding;
  }
  ASSERT_NE(branch, nullptr);
  ASSERT_NE(dynamic_shapes, nullptr);
  EXPECT_NEAR(branch->impact_seconds, broken_s + resume_s + fallback_s, 1e-6);
  EXPECT_NEAR(branch->evidence.at("resume_compile_seconds").get<double>(), resume_s, 1e-6);
  EXPECT_NEAR(branch->evidence.at("fallback_compile_seconds").get<double>(), fallback_s, 1e-6);
  EXPECT_GT(branch->impact_seconds, dynamic_shapes->impact_seconds);
}

}  // namespace
}  // namespace torchscope::analyzer::testing
