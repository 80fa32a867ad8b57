// Host-side collectives (the store's `collectives` table: torch.distributed calls and DDP buckets) on a lane of
// their own under the thread that called them, with their fields in words in the Details pane: in the real window
// offscreen on a store written by the Writer, and on a v4 store, where they are cpu_ops rows of category
// `collective` that the reader gives as the table (they are shown there once, not also as CPU ops).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <QApplication>
#include <QSignalSpy>
#include <QTest>
#include <algorithm>
#include <filesystem>
#include <string>

#include "OffscreenApp.h"
#include "SampleStore.h"
#include "torchscope/gui/ItemModels.h"
#include "torchscope/gui/MainWindow.h"
#include "torchscope/gui/PanelFields.h"
#include "torchscope/gui/TimelineView.h"
#include "torchscope/store/Writer.h"

namespace torchscope::gui {
namespace {

using testing::kBase;
using testing::kStepNs;

constexpr int kSteps = 4;
constexpr std::int64_t kBucketBytes = 25 * testing::kMiB;
constexpr std::int64_t kGatherBytes = 4096;
constexpr const char* kMainCollectives = "thread 42 (MainThread) · collectives";
constexpr const char* kWorkerCollectives = "thread 43 (worker) · collectives";

// Per step: the backward's two DDP buckets on the main thread, and an asynchronous all_gather on a worker thread.
std::string writeDdpStore(const std::string& stem) {
  const auto dir = std::filesystem::path(TORCHSCOPE_BINARY_DIR) / "tests" / "gui" / "collectives";
  std::filesystem::create_directories(dir);
  const std::string path = testing::processFile(dir, stem, ".db").string();
  std::filesystem::remove(path);
  auto writer = store::Writer::open(path);
  EXPECT_TRUE(writer.ok());
  if (!writer) return path;
  auto& w = **writer;
  store::RunInfo run;
  run.command_line = "python -m torch.distributed.run --nproc_per_node 2 train_ddp.py";
  run.start_ns = kBase;
  run.source = "collector";
  w.setRun(run);
  w.add(store::Process{.pid = 42, .name = "python", .rank = 0, .start_ns = kBase});
  w.add(store::Thread{.pid = 42, .tid = 42, .name = "MainThread"});
  w.add(store::Thread{.pid = 42, .tid = 43, .name = "worker"});
  for (int s = 0; s < kSteps; ++s) {
    const base::Nanos step = kBase + s * kStepNs;
    w.add(store::Step{
        .pid = 42, .tid = 42, .index = s, .start_ns = step, .end_ns = step + kStepNs - 1000, .source = "optimizer"});
    w.add(store::CpuOp{.pid = 42,
                       .tid = 42,
                       .start_ns = step + 100,
                       .end_ns = step + 3'000'000,
                       .name = "aten::linear",
                       .category = "cpu_op"});
    for (int bucket = 0; bucket < 2; ++bucket) {
      const base::Nanos start = step + 4'000'000 + bucket * 2'000'000;
      w.add(store::Collective{.pid = 42,
                              .tid = 42,
                              .start_ns = start,
                              .end_ns = start + 1'500'000,
                              .name = "ddp:allreduce",
                              .op = "allreduce",
                              .backend = "gloo",
                              .bytes = kBucketBytes,
                              .source = "ddp",
                              .bucket = bucket,
                              .last_bucket = bucket == 1});
    }
    w.add(store::Collective{.pid = 42,
                            .tid = 43,
                            .start_ns = step + 1'000'000,
                            .end_ns = step + 1'200'000,
                            .name = "all_gather",
                            .op = "all_gather",
                            .backend = "gloo",
                            .bytes = kGatherBytes,
                            .source = "torch.distributed",
                            .async = true});
  }
  EXPECT_TRUE(w.close(kBase + kSteps * kStepNs).ok());
  return path;
}

const Track* trackTitled(const Timeline& timeline, std::string_view title) {
  const auto it = std::find_if(timeline.tracks.begin(), timeline.tracks.end(),
                               [&](const Track& track) { return track.title == title; });
  return it == timeline.tracks.end() ? nullptr : &*it;
}

std::size_t slicesOf(const Track& track) {
  std::size_t count = 0;
  for (const Lane& lane : track.lanes) count += lane.slices().size();
  return count;
}

std::string valueOf(const std::vector<Field>& fields, std::string_view name) {
  const auto it = std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.name == name; });
  return it == fields.end() ? std::string("<missing>") : it->value;
}

TEST(CollectivesLane, TheWindowShowsCollectivesOnTheCallingThreadAndTheirDetailsInWords) {
  const std::string path = writeDdpStore("ddp");
  testing::offscreenApplication();
  MainWindow window;
  window.resize(1600, 900);
  window.show();
  QSignalSpy loaded(&window, &MainWindow::loaded);
  window.open({path});
  ASSERT_TRUE(loaded.wait(60'000));
  ASSERT_TRUE(loaded.front().front().toBool()) << window.loadError();
  TimelineView* view = window.timelineView();
  const Timeline& timeline = *view->timeline();

  const Track* main = trackTitled(timeline, kMainCollectives);
  const Track* worker = trackTitled(timeline, kWorkerCollectives);
  ASSERT_NE(main, nullptr);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(main->kind, TrackKind::kCollectives);
  EXPECT_EQ(main->tid, 42);
  EXPECT_EQ(worker->tid, 43);
  EXPECT_EQ(slicesOf(*main), 2U * kSteps);
  EXPECT_EQ(slicesOf(*worker), 1U * kSteps);
  // The collectives lane follows the CPU ops of the same thread, in the thread's order of tracks.
  const auto index = [&](const Track* track) { return track - timeline.tracks.data(); };
  const Track* cpu_ops = trackTitled(timeline, "thread 42 (MainThread) · CPU ops");
  ASSERT_NE(cpu_ops, nullptr);
  EXPECT_LT(index(cpu_ops), index(main));
  EXPECT_EQ(slicesOf(*cpu_ops), 1U * kSteps);

  // Clicking the second step's last bucket selects it and lists its fields in words.
  const Nanos bucket_start = kBase + kStepNs + 6'000'000;
  view->zoomToRange(bucket_start - 500'000, bucket_start + 2'000'000);
  const LayoutRow* row = view->layout()->rowOfTrack(static_cast<std::uint32_t>(index(main)));
  ASSERT_NE(row, nullptr);
  const QPoint point = view->pointAt(bucket_start + 700'000, TrackLayout::laneTop(*row, 0) + 8);
  QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, point);
  ASSERT_TRUE(view->selection().has_value());
  EXPECT_EQ(view->selection()->slice.kind, RecordKind::kCollective);
  EXPECT_EQ(view->selection()->slice.start_ns, bucket_start);
  const std::vector<Field>& fields = window.detailsModel()->fields();
  EXPECT_EQ(valueOf(fields, "name"), "ddp:allreduce");
  EXPECT_EQ(valueOf(fields, "collective"), "allreduce");
  EXPECT_EQ(valueOf(fields, "backend"), "gloo");
  EXPECT_EQ(valueOf(fields, "bucket size"), "25.0 MiB (26214400 bytes)");
  EXPECT_EQ(valueOf(fields, "DDP bucket"), "1");
  EXPECT_EQ(valueOf(fields, "the step's last bucket"), "yes");
  EXPECT_EQ(valueOf(fields, "duration"), "1.50 ms");
  EXPECT_EQ(valueOf(fields, "thread"), "42");
  EXPECT_EQ(valueOf(fields, "asynchronous (async_op=True)"), "<missing>");  // said of calls, not of buckets
  EXPECT_EQ(valueOf(fields, "store row").rfind("collectives #", 0), 0U) << valueOf(fields, "store row");
  for (const Field& field : fields) EXPECT_NE(field.value, "-1") << field.name;

  // The worker's call is described as a torch.distributed call, asynchronous, without bucket fields.
  const Lane& lane = worker->lanes.front();
  ASSERT_FALSE(lane.slices().empty());
  const SliceRef gather{static_cast<std::uint32_t>(index(worker)), 0, lane.slices().front()};
  const auto described = describe(timeline, gather);
  EXPECT_EQ(valueOf(described, "issued by"), "torch.distributed");
  EXPECT_EQ(valueOf(described, "tensors passed"), "4.0 KiB (4096 bytes)");
  EXPECT_EQ(valueOf(described, "asynchronous (async_op=True)"), "yes");
  EXPECT_EQ(valueOf(described, "DDP bucket"), "<missing>");

  // The Statistics tab counts them by name.
  std::uint64_t buckets = 0;
  for (const NameTotal& total : timeline.stats.totals(timeline.begin_ns, timeline.end_ns)) {
    if (total.kind == StatKind::kCollective && timeline.names[total.name] == "ddp:allreduce") buckets += total.count;
  }
  EXPECT_EQ(buckets, 2U * kSteps);
  std::filesystem::remove(path);
}

// v4 wrote a collective as a cpu_ops row of category `collective` with its fields in `args`.
void makeVersion4(const std::string& path) {
  constexpr std::string_view kRows = R"sql(
DROP TABLE collectives;
INSERT INTO strings (value) VALUES ('ddp:allreduce');
INSERT INTO cpu_ops (pid, tid, start_ns, end_ns, name_id, category, correlation_id, args) VALUES
  (42, 42, 1004000000, 1005500000, (SELECT id FROM strings WHERE value = 'ddp:allreduce'), 'collective', -1,
   '{"op": "allreduce", "backend": "gloo", "source": "ddp", "bytes": 4096, "bucket": 0, "last_bucket": true}');
PRAGMA user_version = 4;
)sql";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  EXPECT_EQ(sqlite3_exec(db, std::string(kRows).c_str(), nullptr, nullptr, &message), SQLITE_OK)
      << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

TEST(CollectivesLane, AVersion4StoreShowsItsCollectiveRowsOnceOnTheCollectivesLane) {
  const std::string path = writeDdpStore("v4");
  makeVersion4(path);
  auto loaded = loadTimeline({path});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const Timeline& timeline = **loaded;
  const Track* main = trackTitled(timeline, kMainCollectives);
  ASSERT_NE(main, nullptr);
  ASSERT_EQ(slicesOf(*main), 1U);
  const Slice& slice = main->lanes.front().slices().front();
  EXPECT_EQ(timeline.name(slice), "ddp:allreduce");
  const auto fields = describe(timeline, {static_cast<std::uint32_t>(main - timeline.tracks.data()), 0, slice});
  EXPECT_EQ(valueOf(fields, "bucket size"), "4.0 KiB (4096 bytes)");
  EXPECT_EQ(valueOf(fields, "the step's last bucket"), "yes");
  const Track* cpu_ops = trackTitled(timeline, "thread 42 (MainThread) · CPU ops");
  ASSERT_NE(cpu_ops, nullptr);
  EXPECT_EQ(slicesOf(*cpu_ops), 1U * kSteps);  // aten::linear only
  EXPECT_EQ(trackTitled(timeline, kWorkerCollectives), nullptr);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace torchscope::gui
