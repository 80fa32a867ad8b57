// Building the timeline from a real store: tracks, search, findings, details, layout hit tests.
#include <gtest/gtest.h>

#include <algorithm>

#include "SampleStore.h"
#include "torchscope/gui/Details.h"
#include "torchscope/gui/Viewport.h"

namespace torchscope::gui {
namespace {

class TimelineBuild : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto dir = std::filesystem::path(TORCHSCOPE_BINARY_DIR) / "tests" / "gui" / "build_test";
    path_ = testing::writeSampleStore(dir);
    auto loaded = loadTimeline(path_);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    timeline_ = loaded.value();
  }
  static void TearDownTestSuite() {
    timeline_.reset();
    std::filesystem::remove(path_);
  }

  static const Track* findTrack(std::string_view title) {
    for (const auto& track : timeline_->tracks) {
      if (track.title == title) return &track;
    }
    return nullptr;
  }

  static std::shared_ptr<const Timeline> timeline_;
  static std::string path_;
};
std::shared_ptr<const Timeline> TimelineBuild::timeline_;
std::string TimelineBuild::path_;

TEST_F(TimelineBuild, ArrangesRowsIntoProcessThreadAndStreamTracks) {
  std::vector<std::string> titles;
  for (const auto& track : timeline_->tracks) titles.push_back(track.group + " / " + track.title);
  const std::vector<std::string> expected{
      "process 42 (python) / torch.compile",
      "process 42 (python) / graph breaks · recompiles",
      "process 42 (python) / thread 42 (MainThread) · steps",
      "process 42 (python) / thread 42 (MainThread) · NVTX",
      "process 42 (python) / thread 42 (MainThread) · CPU ops",
      "process 42 (python) / thread 42 (MainThread) · CUDA API",
      "process 42 (python) / thread 42 (MainThread) · syncs",
      "process 42 (python) / thread 43 (loader) · CPU ops",
      "GPU 0 (Mock GPU) / stream 7",
      "GPU 0 (Mock GPU) / stream 13",
  };
  EXPECT_EQ(titles, expected);
  EXPECT_EQ(timeline_->sliceCount(), 4163U);
  EXPECT_EQ(timeline_->begin_ns, testing::kBase - 500'000'000);
  EXPECT_EQ(timeline_->end_ns, testing::kBase + 20 * testing::kStepNs - 1000);  // the last step's end

  const Track* cpu_ops = findTrack("thread 42 (MainThread) · CPU ops");
  ASSERT_NE(cpu_ops, nullptr);
  ASSERT_EQ(cpu_ops->lanes.size(), 2U);  // aten::addmm nests inside aten::linear
  EXPECT_EQ(timeline_->name(cpu_ops->lanes[1].slices()[0]), "aten::addmm");

  const Track* syncs = findTrack("thread 42 (MainThread) · syncs");
  ASSERT_NE(syncs, nullptr);
  EXPECT_EQ(timeline_->name(syncs->lanes[0].slices()[0]), "aten::item @ train.py:57");

  const Track* events = findTrack("graph breaks · recompiles");
  ASSERT_NE(events, nullptr);
  ASSERT_TRUE(events->markers());
  EXPECT_EQ(events->lanes[0].slices().size(), 2U);
  EXPECT_EQ(timeline_->name(events->lanes[0].slices()[0]), "graph break: Data-dependent branching");
}

TEST_F(TimelineBuild, SearchFindsSlicesByNameIgnoringCase) {
  const auto found = timeline_->search("SGEMM");
  EXPECT_EQ(found.size(), 20U * 50U);
  for (const auto& ref : found) EXPECT_EQ(timeline_->slice(ref).kind, RecordKind::kKernel);
  EXPECT_TRUE(timeline_->search("no such kernel").empty());
  const auto mask = timeline_->matchingNames("memcpy");
  EXPECT_EQ(std::count(mask.begin(), mask.end(), true), 1);
}

TEST_F(TimelineBuild, FindingsLocateTheirSlicesBySourceLineOrEvidence) {
  const FindingsTable table(timeline_->records.findings);
  ASSERT_EQ(table.rows(), 2U);
  EXPECT_EQ(table.cell(0, FindingsTable::kRule), "compile/graph-break");  // the larger impact first
  EXPECT_EQ(table.cell(0, FindingsTable::kLocation), "model.py:31");
  EXPECT_EQ(table.cell(1, FindingsTable::kImpact), "20.0 ms (10.0%)");
  EXPECT_EQ(table.cell(5, 0), "");

  const auto graph_break = locateFinding(*timeline_, table.finding(0));
  ASSERT_EQ(graph_break.slices.size(), 1U);
  EXPECT_EQ(timeline_->slice(graph_break.slices[0]).kind, RecordKind::kGraphBreak);

  const auto sync = locateFinding(*timeline_, table.finding(1));  // "train.py" matches "/src/train.py"
  ASSERT_EQ(sync.slices.size(), 20U);
  EXPECT_EQ(timeline_->slice(sync.slices[0]).start_ns, testing::kBase + 8'000'000);
  ASSERT_TRUE(sync.range.has_value());

  store::Finding by_evidence;
  by_evidence.evidence = R"({"steps": [{"start_ns": 1050000000, "end_ns": 1060000000, "blocked_ns": 5}]})";
  const auto located = locateFinding(*timeline_, by_evidence);
  EXPECT_TRUE(located.slices.empty());
  ASSERT_TRUE(located.range.has_value());
  EXPECT_EQ(located.range->first, 1'050'000'000);
  EXPECT_EQ(located.range->second, 1'060'000'000);
  by_evidence.evidence = "not json";
  EXPECT_FALSE(locateFinding(*timeline_, by_evidence).range.has_value());
}

TEST_F(TimelineBuild, DetailsListEveryFieldOfTheRowWithItsSourceLine) {
  const auto found = timeline_->search("aten::item");
  ASSERT_FALSE(found.empty());
  const auto fields = describe(*timeline_, found.front());
  const auto value = [&](std::string_view name) {
    const auto it = std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.name == name; });
    return it == fields.end() ? std::string("<missing>") : it->value;
  };
  EXPECT_EQ(value("table"), "syncs");
  EXPECT_EQ(value("source"), "/src/train.py:57");
  EXPECT_EQ(value("duration"), "1.00 ms");
  EXPECT_EQ(value("sync_kind"), "stream");
  EXPECT_EQ(value("function"), "train_step");
  EXPECT_EQ(value("stack"), "");

  const auto copy = describe(*timeline_, timeline_->search("Memcpy HtoD").front());
  EXPECT_NE(std::find_if(copy.begin(), copy.end(), [](const Field& f) { return f.value == "4194304 (4.0 MiB)"; }),
            copy.end());
  EXPECT_EQ(describe(timeline_->records.findings[0]).front().value, "findings");
}

TEST_F(TimelineBuild, LayoutAndHitTestFindTheSliceUnderAPixel) {
  const TrackLayout layout(*timeline_);
  const auto group_rows = std::count_if(layout.rows().begin(), layout.rows().end(),
                                        [](const LayoutRow& row) { return row.track < 0; });
  EXPECT_EQ(group_rows, 2);
  Viewport viewport;
  viewport.setWidth(1000);
  viewport.setBounds(timeline_->begin_ns, timeline_->end_ns);
  const Nanos kernel_start = testing::kBase + 500'000;  // the first kernel of step 0, 40 us long
  viewport.showRange(kernel_start, kernel_start + 40'000, 0);  // the kernel fills the width

  std::uint32_t stream7 = 0;
  while (timeline_->tracks[stream7].title != "stream 7") ++stream7;
  const LayoutRow* row = layout.rowOfTrack(stream7);
  ASSERT_NE(row, nullptr);
  const auto hit = hitTest(*timeline_, layout, viewport, 500, TrackLayout::laneTop(*row, 0) + 5);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(timeline_->slice(*hit).start_ns, kernel_start);
  EXPECT_EQ(timeline_->name(timeline_->slice(*hit)), "ampere_sgemm_128x64");
  EXPECT_FALSE(hitTest(*timeline_, layout, viewport, 500, 1).has_value());  // a group header
  EXPECT_FALSE(hitTest(*timeline_, layout, viewport, 500, layout.height() + 10).has_value());
}

TEST(TimelineLoad, ReportsStoreErrorsAndCancellation) {
  const auto missing = loadTimeline("/nonexistent/run.db");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);

  const auto dir = std::filesystem::path(TORCHSCOPE_BINARY_DIR) / "tests" / "gui" / "cancel_test";
  const auto path = testing::writeSampleStore(dir, 2, 10);
  const auto cancelled = loadTimeline(path, [] { return true; });
  std::filesystem::remove(path);
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(cancelled.error().code, ErrorCode::kInvalidArgument);
}

TEST(TimelineLoad, EmptyRecordsGiveAnEmptyTimelineWithAUsableSpan) {
  const auto timeline = buildTimeline({});
  EXPECT_TRUE(timeline->tracks.empty());
  EXPECT_LT(timeline->begin_ns, timeline->end_ns);
  EXPECT_TRUE(timeline->search("x").empty());
}

}  // namespace
}  // namespace torchscope::gui
