// A store of the previous version (v4) still reads: the tables and the column v5 declared read from that
// version's own rows (cpu_ops rows with JSON args, the run attribute capture.window), and a column added since
// reads as its documented default. The v4 store is made here as v4 wrote it: a store of this version whose v5
// tables and column are dropped, with the rows v4's bridge wrote in their place and user_version 4.
#include <sqlite3.h>

#include <string>

#include <gtest/gtest.h>

#include "torchscope/store/Reader.h"
#include "torchscope/store/Schema.h"
#include "torchscope/store/Writer.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::store {
namespace {

void execSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK) << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

Compile compileOf(std::int64_t frame_id, base::Nanos start_ns) {
  Compile compile;
  compile.pid = 7;
  compile.frame_id = frame_id;
  compile.frame_compile_id = 0;
  compile.start_ns = start_ns;
  compile.end_ns = start_ns + 100;
  compile.status = "ok";
  compile.restart_reasons = "[]";
  return compile;
}

// The rows v4's bridge wrote, each as a cpu_ops row of its category (docs/FORMAT.md before v5).
constexpr std::string_view kVersion4Rows = R"sql(
DROP TABLE compiled_regions; DROP TABLE op_census; DROP TABLE capture_window; DROP TABLE collectives;
ALTER TABLE compiles DROP COLUMN cudagraph_skip_reason;
INSERT INTO strings (value) VALUES ('Block.forward'), ('step'), ('skipped'), ('ddp:allreduce');
INSERT INTO cpu_ops (pid, tid, start_ns, end_ns, name_id, category, correlation_id, args) VALUES
  (7, 70, 1000, 2000, (SELECT id FROM strings WHERE value = 'Block.forward'), 'compiled_region', -1,
   '{"region": 1, "step": 3, "calls": 4, "wall_ns": 900, "compile_calls": 1, "compile_wall_ns": 500, "cpu_calls": 1,
     "cpu_ns": 80, "cudagraphs": true, "frames": [0, 2], "site_file": "train.py", "site_line": 30,
     "call_file": "train.py", "call_line": 36, "call_function": "<module>"}'),
  (7, 70, 3000, 9000, (SELECT id FROM strings WHERE value = 'step'), 'op_census', -1,
   '{"step": 2, "step_ns": 5000, "ops": 998, "op_ns": 400, "short_ops": 933, "model": "Net", "model_line": 12,
     "frequent_ops": [{"name": "aten::mm", "count": 40, "ns": 90}],
     "sites": [{"context": "model", "file": "train.py", "line": 12, "ops": 990,
                "frequent_ops": [{"name": "aten::add", "count": 3, "ns": 5}]}]}'),
  (7, 70, 250, 250, (SELECT id FROM strings WHERE value = 'skipped'), 'cudagraphs', -1,
   '{"frame_id": 2, "frame_compile_id": 0, "reason": "skipping cudagraphs due to mutated inputs"}'),
  (7, 71, 4000, 4500, (SELECT id FROM strings WHERE value = 'ddp:allreduce'), 'collective', -1,
   '{"op": "allreduce", "backend": "gloo", "source": "ddp", "bytes": 4096, "bucket": 0, "last_bucket": true}');
INSERT INTO run_attributes (key, value) VALUES ('capture.window',
  '{"mode": "steps", "first_step": 2, "end_step": 5, "intervals": [[100, 900]], "open_s": 8e-07, "steps": 3,
    "first_kept_step": 2, "last_kept_step": 4}');
PRAGMA user_version = 4;
)sql";

class PreviousVersion : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("v4.db");
    auto writer = Writer::open(path_);
    ASSERT_TRUE(writer) << writer.error().message;
    Process process;
    process.pid = 7;
    process.name = "python";
    (*writer)->add(process);
    (*writer)->add(compileOf(0, 100));
    (*writer)->add(compileOf(2, 200));
    ASSERT_TRUE((*writer)->close(10'000));
    execSql(path_, std::string(kVersion4Rows));
    auto reader = Reader::open(path_);
    ASSERT_TRUE(reader) << reader.error().message;
    reader_ = std::move(*reader);
  }

  testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<Reader> reader_;
};

TEST_F(PreviousVersion, OpensAsTheVersionItWasWritten) {
  EXPECT_EQ(kSchemaVersion, 5);
  EXPECT_EQ(reader_->schemaVersion(), 4);
}

TEST_F(PreviousVersion, ACompiledRegionReadsFromItsCpuOpsRow) {
  auto rows = reader_->load<CompiledRegion>();
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  const CompiledRegion& region = rows->front();
  EXPECT_EQ(std::tie(region.pid, region.tid, region.start_ns, region.end_ns), std::tuple(7, 70, 1000, 2000));
  EXPECT_EQ(region.name, "Block.forward");
  EXPECT_EQ(std::tie(region.region, region.step, region.calls, region.wall_ns), std::tuple(1, 3, 4, 900));
  EXPECT_EQ(std::tie(region.compile_calls, region.compile_wall_ns, region.cpu_calls, region.cpu_ns),
            std::tuple(1, 500, 1, 80));
  EXPECT_EQ(region.cpu_wall_ns, -1);  // a key the row lacks reads as the column's default
  EXPECT_TRUE(region.cudagraphs);
  EXPECT_EQ(region.frameIds(), (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(std::tie(region.site_file, region.site_line, region.site_function), std::tuple("train.py", 30, ""));
  EXPECT_EQ(std::tie(region.call_file, region.call_line, region.call_function), std::tuple("train.py", 36, "<module>"));
}

TEST_F(PreviousVersion, TheOpCensusReadsWithItsSitesAndOps) {
  auto rows = reader_->load<OpCensus>();
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  const OpCensus& census = rows->front();
  EXPECT_EQ(std::tie(census.start_ns, census.end_ns, census.step, census.step_ns), std::tuple(3000, 9000, 2, 5000));
  EXPECT_EQ(std::tie(census.ops, census.op_ns, census.short_ops, census.op_overhead_ns), std::tuple(998, 400, 933, -1));
  EXPECT_EQ(std::tie(census.model, census.model_line, census.step_line), std::tuple("Net", 12, -1));
  EXPECT_EQ(census.frequentOps(), (std::vector<CensusOp>{{"aten::mm", 40, 90}}));
  const auto sites = census.censusSites();
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(std::tie(sites[0].context, sites[0].file, sites[0].line, sites[0].ops, sites[0].gap_ns),
            std::tuple("model", "train.py", 12, 990, 0));
  EXPECT_EQ(frequentOpsOf(sites[0]), (std::vector<CensusOp>{{"aten::add", 3, 5}}));
}

// compiles.cudagraph_skip_reason is a column since v5: the compile whose frame had a `cudagraphs` row reads its
// reason, the other the documented default ''.
TEST_F(PreviousVersion, AColumnAddedSinceReadsFromTheOlderRowsOrAsItsDefault) {
  auto compiles = reader_->load<Compile>();
  ASSERT_TRUE(compiles) << compiles.error().message;
  ASSERT_EQ(compiles->size(), 2u);
  EXPECT_EQ((*compiles)[0].cudagraph_skip_reason, "");
  EXPECT_EQ((*compiles)[1].cudagraph_skip_reason, "skipping cudagraphs due to mutated inputs");
  EXPECT_EQ((*compiles)[1].co_name, "");  // the other columns as stored
}

TEST_F(PreviousVersion, CollectivesAndTheCaptureWindowRead) {
  auto collectives = reader_->load<Collective>();
  ASSERT_TRUE(collectives) << collectives.error().message;
  ASSERT_EQ(collectives->size(), 1u);
  const Collective& bucket = collectives->front();
  EXPECT_EQ(std::tie(bucket.tid, bucket.name, bucket.op, bucket.backend, bucket.source),
            std::tuple(71, "ddp:allreduce", "allreduce", "gloo", "ddp"));
  EXPECT_EQ(std::tie(bucket.bytes, bucket.bucket, bucket.last_bucket, bucket.async), std::tuple(4096, 0, true, false));
  auto windows = reader_->load<CaptureWindow>();
  ASSERT_TRUE(windows) << windows.error().message;
  ASSERT_EQ(windows->size(), 1u);
  const CaptureWindow& window = windows->front();
  EXPECT_EQ(std::tie(window.pid, window.mode, window.first_step, window.end_step), std::tuple(7, "steps", 2, 5));
  EXPECT_EQ(std::tie(window.steps, window.first_kept_step, window.last_kept_step), std::tuple(3, 2, 4));
  EXPECT_DOUBLE_EQ(window.open_s, 8e-7);
  EXPECT_DOUBLE_EQ(window.duration_s, -1);
  EXPECT_EQ(window.openIntervals(), (std::vector<std::pair<base::Nanos, base::Nanos>>{{100, 900}}));
}

TEST_F(PreviousVersion, CountsAndTheTimeSpanCoverTheDerivedRowsOnce) {
  auto counts = reader_->counts();
  ASSERT_TRUE(counts) << counts.error().message;
  EXPECT_EQ(counts->at("compiled_regions"), 1);
  EXPECT_EQ(counts->at("op_census"), 1);
  EXPECT_EQ(counts->at("collectives"), 1);
  EXPECT_EQ(counts->at("cpu_ops"), 4);  // the older rows stay what they were
  auto span = reader_->timeSpan();
  ASSERT_TRUE(span) << span.error().message;
  ASSERT_TRUE(span->has_value());
  EXPECT_EQ((*span)->begin_ns, 100);
  EXPECT_EQ((*span)->end_ns, 9000);
  LoadOptions ranged;
  ranged.range = TimeRange{2500, 5000};
  auto in_range = reader_->load<OpCensus>(ranged);
  ASSERT_TRUE(in_range) << in_range.error().message;
  EXPECT_EQ(in_range->size(), 1u);
  ranged.range = TimeRange{9500, 9900};
  EXPECT_TRUE(reader_->load<OpCensus>(ranged)->empty());
}

// A store of this version writes the same records to their own tables and reads them back as written.
TEST(CurrentVersion, TheDeclaredRecordsRoundTrip) {
  testing::TempDir dir;
  const std::string path = dir.file("v5.db");
  CompiledRegion region;
  region.pid = 7;
  region.name = "f";
  region.region = 1;
  region.frames = "[4]";
  Compile compile = compileOf(4, 10);
  compile.cudagraph_skip_reason = "skipping cudagraphs due to cpu device";
  {
    auto writer = Writer::open(path);
    ASSERT_TRUE(writer) << writer.error().message;
    (*writer)->add(region);
    (*writer)->add(compile);
    ASSERT_TRUE((*writer)->close(100));
  }
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message;
  EXPECT_EQ((*reader)->schemaVersion(), kSchemaVersion);
  auto regions = (*reader)->load<CompiledRegion>();
  ASSERT_TRUE(regions) << regions.error().message;
  EXPECT_EQ(*regions, std::vector<CompiledRegion>{region});
  EXPECT_EQ(regions->front().frameIds(), std::vector<std::int64_t>{4});
  auto compiles = (*reader)->load<Compile>();
  ASSERT_TRUE(compiles) << compiles.error().message;
  EXPECT_EQ(*compiles, std::vector<Compile>{compile});
}

}  // namespace
}  // namespace torchscope::store
