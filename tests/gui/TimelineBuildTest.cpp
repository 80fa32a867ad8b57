// Loading the timeline from a real store: tracks, search, findings, details, layout hit tests, and
// the same store loaded summarised (tiny lane limits) read back exactly through DetailSource.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "SampleStore.h"
#include "torchscope/gui/DetailSource.h"
#include "torchscope/gui/PanelFields.h"
#include "torchscope/gui/Layout.h"
#include "torchscope/gui/StatsTable.h"
#include "torchscope/store/Reader.h"

namespace torchscope::gui {
namespace {

class TimelineBuild : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto dir = std::filesystem::path(TORCHSCOPE_BINARY_DIR) / "tests" / "gui" / "build_test";
    path_ = testing::writeSampleStore(dir);
    auto loaded = loadTimeline({path_});
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

  static std::unique_ptr<DetailSource> source() {
    auto source = DetailSource::open(timeline_);
    EXPECT_TRUE(source.ok());
    return source ? std::move(source).value() : nullptr;
  }

  static std::optional<SliceRef> first(DetailSource& source, std::string_view needle) {
    auto found = source.findNext(timeline_->matchingNames(needle), std::nullopt, true);
    EXPECT_TRUE(found.ok());
    return found ? found.value() : std::nullopt;
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
      "process 42 (python) / memory · host RSS",
      "process 42 (python) / thread 42 (MainThread) · steps",
      "process 42 (python) / thread 42 (MainThread) · NVTX",
      "process 42 (python) / thread 42 (MainThread) · CPU ops",
      "process 42 (python) / thread 42 (MainThread) · CUDA API",
      "process 42 (python) / thread 42 (MainThread) · syncs",
      "process 42 (python) / thread 43 (loader) · CPU ops",
      "GPU 0 (Mock GPU) / memory · allocated",
      "GPU 0 (Mock GPU) / memory · reserved",
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

TEST_F(TimelineBuild, SearchFindsSlicesByNameIgnoringCaseInTimeOrder) {
  const auto sgemm = timeline_->matchingNames("SGEMM");
  EXPECT_EQ(timeline_->stats.count(sgemm), 20U * 50U);
  auto searcher = source();
  auto found = searcher->findNext(sgemm, std::nullopt, true);
  ASSERT_TRUE(found.ok() && found.value().has_value());
  EXPECT_EQ(found.value()->slice.kind, RecordKind::kKernel);
  EXPECT_EQ(found.value()->slice.start_ns, testing::kBase + 500'000);
  auto second = searcher->findNext(sgemm, found.value(), true);
  ASSERT_TRUE(second.ok() && second.value().has_value());
  EXPECT_EQ(second.value()->slice.start_ns, testing::kBase + 620'000);  // every other kernel
  auto back = searcher->findNext(sgemm, second.value(), false);
  ASSERT_TRUE(back.ok() && back.value().has_value());
  EXPECT_EQ(back.value()->slice, found.value()->slice);
  EXPECT_FALSE(first(*searcher, "no such kernel").has_value());
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
  EXPECT_EQ(graph_break.slices[0].slice.kind, RecordKind::kGraphBreak);

  const auto sync = locateFinding(*timeline_, table.finding(1));  // "train.py" matches "/src/train.py"
  ASSERT_EQ(sync.slices.size(), 20U);
  EXPECT_EQ(sync.slices[0].slice.start_ns, testing::kBase + 8'000'000);
  ASSERT_TRUE(sync.range.has_value());

  store::Finding by_evidence;
  by_evidence.evidence = R"({"steps": [{"start_ns": 1050000000, "end_ns": 1060000000, "blocked_ns": 5}]})";
  const auto located = locateFinding(*timeline_, analyzer::findingFromRecord(by_evidence));
  EXPECT_TRUE(located.slices.empty());
  ASSERT_TRUE(located.range.has_value());
  EXPECT_EQ(located.range->first, 1'050'000'000);
  EXPECT_EQ(located.range->second, 1'060'000'000);
  by_evidence.evidence = "not json";
  EXPECT_FALSE(locateFinding(*timeline_, analyzer::findingFromRecord(by_evidence)).range.has_value());
}

// The Details pane reads as words: times from the run's start (not raw clock stamps), sizes with their unit, and
// none of the store's internal fields or unknowns (-1, empty).
TEST_F(TimelineBuild, DetailsListTheRowsFieldsInWordsWithItsSourceLine) {
  auto details = source();
  const auto found = first(*details, "aten::item");
  ASSERT_TRUE(found.has_value());
  const auto fields = describe(*timeline_, *found);
  const auto valueIn = [](const std::vector<Field>& listed, std::string_view name) {
    const auto it = std::find_if(listed.begin(), listed.end(), [&](const Field& f) { return f.name == name; });
    return it == listed.end() ? std::string("<missing>") : it->value;
  };
  const auto value = [&](std::string_view name) { return valueIn(fields, name); };
  EXPECT_EQ(value("source"), "/src/train.py:57");
  EXPECT_EQ(value("duration"), "1.00 ms");
  EXPECT_EQ(value("waited for"), "stream");
  EXPECT_EQ(value("function"), "train_step");
  EXPECT_EQ(value("store row").rfind("syncs #", 0), 0U) << value("store row");
  EXPECT_EQ(value("start"), runOffset(found->slice.start_ns, timeline_->begin_ns));
  EXPECT_THAT(value("start"), ::testing::EndsWith(" s into the run"));
  EXPECT_EQ(value("Python stack"), "<missing>");  // none recorded: not listed empty
  for (const Field& field : fields) {
    EXPECT_EQ(field.value.find(std::to_string(found->slice.start_ns)), std::string::npos) << field.name;
    EXPECT_NE(field.value, "-1") << field.name;
    EXPECT_EQ(field.name.find('_'), std::string::npos) << field.name;
  }

  const auto copy_ref = first(*details, "Memcpy HtoD");
  ASSERT_TRUE(copy_ref.has_value());
  const auto copy = details->describe(*copy_ref);  // a bulk row: its columns come from the store
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(valueIn(copy.value(), "store row").rfind("memcpy #", 0), 0U);
  EXPECT_EQ(valueIn(copy.value(), "bytes"), "4.0 MiB (4194304 bytes)");
  EXPECT_EQ(valueIn(copy.value(), "copy kind"), "HtoD");
  EXPECT_EQ(valueIn(copy.value(), "start ns"), "<missing>");
  for (const Field& field : copy.value()) {
    EXPECT_NE(field.value, "-1") << field.name;
    EXPECT_EQ(field.name.find('_'), std::string::npos) << field.name;
  }
  const auto finding = describe(timeline_->records.findings[0]);
  EXPECT_EQ(valueIn(finding, "store row"), "findings");
  EXPECT_THAT(valueIn(finding, "impact"), ::testing::HasSubstr("% of the run"));
}

// A compile as torch names it in its own logs ("0/1", "!2/0/1_1" under compiled autograd after a restart).
TEST(DetailFields, CompilesAreNamedByTorchsCompileIdAndUnknownsAreLeftOut) {
  Timeline timeline;
  timeline.names.push_back("forward");
  store::Compile compile;
  compile.frame_id = 0;
  compile.frame_compile_id = 1;
  compile.co_name = "forward";
  compile.co_filename = "/src/model.py";
  compile.co_firstlineno = 12;
  compile.dynamo_ns = 2'000'000;
  compile.status = "ok";
  compile.restart_reasons = "[]";
  timeline.records.compiles.push_back(compile);
  compile.compiled_autograd_id = 2;
  compile.attempt = 1;
  timeline.records.compiles.push_back(compile);
  SliceRef ref;
  ref.slice.kind = RecordKind::kCompile;
  ref.slice.row = 0;
  const auto named = [](const std::vector<Field>& listed, std::string_view name) {
    const auto it = std::find_if(listed.begin(), listed.end(), [&](const Field& f) { return f.name == name; });
    return it == listed.end() ? std::string("<missing>") : it->value;
  };
  const auto plain = describe(timeline, ref);
  EXPECT_EQ(named(plain, "compile id"), "0/1");
  EXPECT_EQ(named(plain, "source"), "/src/model.py:12");
  EXPECT_EQ(named(plain, "Dynamo (whole compile)"), "2.00 ms");
  EXPECT_EQ(named(plain, "Inductor"), "<missing>");  // -1: not measured
  EXPECT_EQ(named(plain, "FX graph cache hit"), "<missing>");
  EXPECT_EQ(named(plain, "restarted because"), "<missing>");  // an empty list says nothing
  for (const Field& field : plain) EXPECT_EQ(field.name.find("autograd"), std::string::npos) << field.name;
  ref.slice.row = 1;
  EXPECT_EQ(named(describe(timeline, ref), "compile id"), "!2/0/1_1");
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
  const auto hit = hitTest(*timeline_, layout, viewport, nullptr, 500, TrackLayout::laneTop(*row, 0) + 5);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->slice.start_ns, kernel_start);
  EXPECT_EQ(timeline_->name(hit->slice), "ampere_sgemm_128x64");
  EXPECT_FALSE(hitTest(*timeline_, layout, viewport, nullptr, 500, 1).has_value());  // a group header
  EXPECT_FALSE(hitTest(*timeline_, layout, viewport, nullptr, 500, layout.height() + 10).has_value());

  // A collapsed group keeps its header only, and shows its tracks' outermost lanes there.
  LayoutState state;
  state.collapsed_groups.insert(timeline_->tracks[stream7].group);
  const TrackLayout collapsed(*timeline_, state);
  EXPECT_EQ(collapsed.rowOfTrack(stream7), nullptr);
  ASSERT_NE(collapsed.groupOfTrack(stream7), nullptr);
  EXPECT_EQ(collapsed.laneY(stream7, 0), collapsed.groupOfTrack(stream7)->y + (TrackLayout::kGroupHeight - TrackLayout::kLaneHeight) / 2);
  EXPECT_FALSE(collapsed.laneY(stream7, 1).has_value());
  EXPECT_LT(collapsed.height(), layout.height());
}

TEST_F(TimelineBuild, MemorySeriesBecomeCounterTracksWithTheirRange) {
  const Track* rss = findTrack("memory · host RSS");
  ASSERT_NE(rss, nullptr);
  EXPECT_TRUE(rss->isCounter());
  EXPECT_TRUE(rss->lanes.empty());
  EXPECT_EQ(rss->series, "host.rss");
  EXPECT_EQ(rss->pid, 42);
  EXPECT_EQ(rss->device, -1);
  // Step ends and the samples in between, on one lane; host.rss_peak is no counter track.
  EXPECT_EQ(rss->counter.count(), 40U);
  EXPECT_EQ(rss->counter.minValue(), testing::kRssBase - testing::kMiB + testing::kInStepRss);
  EXPECT_EQ(rss->counter.maxValue(), testing::kRssBase + 19 * testing::kMiB);
  EXPECT_EQ(rss->counter.beginNs(), testing::kBase + 5'000'000);
  EXPECT_EQ(rss->counter.endNs(), testing::kBase + 20 * testing::kStepNs - 1000);

  const Track* allocated = findTrack("memory · allocated");
  const Track* reserved = findTrack("memory · reserved");
  ASSERT_NE(allocated, nullptr);
  ASSERT_NE(reserved, nullptr);
  EXPECT_EQ(allocated->device, 0);
  EXPECT_EQ(allocated->group, "GPU 0 (Mock GPU)");
  EXPECT_EQ(allocated->counter.minValue(), testing::kAllocatedBase);
  EXPECT_EQ(allocated->counter.maxValue(), testing::kAllocatedBase + 3 * 64 * testing::kMiB);
  EXPECT_EQ(reserved->counter.minValue(), testing::kReserved);
  EXPECT_EQ(reserved->counter.maxValue(), testing::kReserved);

  // The value under a time is the last sample at or before it.
  const Nanos step3_end = testing::kBase + 4 * testing::kStepNs - 1000;
  const auto held = rss->counter.valueAt(step3_end + 1'000'000);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->low, testing::kRssBase + 3 * testing::kMiB);
  EXPECT_EQ(held->high, held->low);
  EXPECT_EQ(held->ts_ns, step3_end);

  // A counter row is one band, taller than a lane; its value is found under a pixel, no slice is.
  const TrackLayout layout(*timeline_);
  const auto rss_track = static_cast<std::uint32_t>(rss - timeline_->tracks.data());
  const LayoutRow* row = layout.rowOfTrack(rss_track);
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->height, TrackLayout::kCounterHeight + TrackLayout::kTrackPadding);
  EXPECT_FALSE(row->collapsible);
  Viewport viewport;
  viewport.setWidth(1000);
  viewport.setBounds(timeline_->begin_ns, timeline_->end_ns);
  viewport.showRange(step3_end, step3_end + 2'000'000, 0);
  const int y = TrackLayout::laneTop(*row, 0) + TrackLayout::kLaneHeight;
  EXPECT_FALSE(hitTest(*timeline_, layout, viewport, nullptr, 500, y).has_value());
  const auto hit = counterAt(*timeline_, layout, viewport, 500, y);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->track, rss_track);
  EXPECT_EQ(hit->value.low, testing::kRssBase + 3 * testing::kMiB);
}

TEST_F(TimelineBuild, MemoryFindingsShowTheirStepsAndTheirCounter) {
  const auto stepSpan = [](std::int64_t first, std::int64_t last) {
    return std::make_pair(testing::kBase + first * testing::kStepNs,
                          testing::kBase + (last + 1) * testing::kStepNs - 1000);
  };
  const auto trackTitle = [](const FindingLocation& location) {
    return location.track ? timeline_->tracks[*location.track].title : std::string("<none>");
  };
  // A holder: growth measured from its first step to the step that confirmed it, on host RSS.
  store::Finding growth{.rule = "memory/growth", .file = "/src/train.py", .line = 57,
                        .evidence = R"({"holder": "history", "kind": "container", "first_step": 4, "step": 16})"};
  FindingLocation location = locateFinding(*timeline_, analyzer::findingFromRecord(growth));
  EXPECT_TRUE(location.slices.empty()) << "not the sync at the same line";
  EXPECT_EQ(location.range, stepSpan(4, 16));
  EXPECT_EQ(trackTitle(location), "memory · host RSS");

  // Growth without a holder names its series and steps.
  growth.evidence = R"({"series": "cuda.allocated", "device": 0, "first_step": 2, "last_step": 19})";
  location = locateFinding(*timeline_, analyzer::findingFromRecord(growth));
  EXPECT_EQ(location.range, stepSpan(2, 19));
  EXPECT_EQ(trackTitle(location), "memory · allocated");

  // A peak: the step where it was first reached, on the device's reserved memory.
  const store::Finding peak{.rule = "memory/peak-near-capacity",
                            .evidence = R"({"device": 0, "peak_reserved": 1, "step": 12, "op": ""})"};
  location = locateFinding(*timeline_, analyzer::findingFromRecord(peak));
  EXPECT_EQ(location.range, stepSpan(12, 12));
  EXPECT_EQ(trackTitle(location), "memory · reserved");

  // Steps the run does not have: the counter is still shown, without a range.
  const store::Finding unknown{.rule = "memory/fragmentation", .evidence = R"({"device": 0, "step": 99})"};
  location = locateFinding(*timeline_, analyzer::findingFromRecord(unknown));
  EXPECT_FALSE(location.range.has_value());
  EXPECT_EQ(trackTitle(location), "memory · reserved");
}

TEST_F(TimelineBuild, FirstViewFramesTheGpuWorkAndGapsAreShaded) {
  EXPECT_EQ(timeline_->focus.what, "the GPUs' work");
  EXPECT_EQ(timeline_->focus.begin_ns, testing::kBase + 100'000);  // the first copy, not the compile before it
  // Between steps the GPU waits from its last kernel to the next step's copy.
  const Nanos last_kernel_end = testing::kBase + 500'000 + 99 * 60'000 + 40'000;
  const auto [first_gap, last_gap] = timeline_->gapsIn(0, 0, last_kernel_end, last_kernel_end + 1);
  ASSERT_EQ(last_gap, first_gap + 1);
  EXPECT_EQ(timeline_->gaps[first_gap].gap.start_ns, last_kernel_end);
  EXPECT_EQ(timeline_->gaps[first_gap].gap.end_ns, testing::kBase + testing::kStepNs + 100'000);
  // The copy after it has no launch call in the store: the cause stays unknown.
  EXPECT_EQ(timeline_->gaps[first_gap].gap.cause, analyzer::IdleCause::kUnknown);
}

TEST_F(TimelineBuild, FlowsJoinLaunchesToKernelsAndSyncsToTheWorkTheyWaitedFor) {
  auto flows_source = source();
  const Nanos kernel_start = testing::kBase + 500'000;
  auto window = flows_source->fetch(kernel_start - 30'000, kernel_start + 50'000);
  ASSERT_TRUE(window.ok());
  const auto launch = std::find_if(window->flows.begin(), window->flows.end(), [&](const Flow& flow) {
    return flow.kind == FlowKind::kLaunch && flow.to.time_ns == kernel_start;
  });
  ASSERT_NE(launch, window->flows.end());
  EXPECT_EQ(launch->from.time_ns, kernel_start - 20'000);
  EXPECT_EQ(timeline_->tracks[launch->from.track].kind, TrackKind::kApiCalls);
  EXPECT_EQ(timeline_->tracks[launch->to.track].title, "stream 7");

  const auto sync = first(*flows_source, "aten::item");
  ASSERT_TRUE(sync.has_value());
  auto waited = flows_source->flowsOf(*sync);
  ASSERT_TRUE(waited.ok());
  // The step's kernels end long before its sync: nothing on the GPU ran into it.
  EXPECT_TRUE(waited->empty());
}

// The same store with lanes of at most 100 slices: summaries in memory, exact slices from the store.
// Every shape of launch join finds the other side of each launch with one lookup of its correlation
// index (pid=? AND correlation_id=?). A range on that index instead (SQLite carrying the
// correlation_id >= 0 filter across the join) reads every later launch per row: the flows of one
// zoomed-in frame took minutes on a 1 M-event store.
TEST_F(TimelineBuild, LaunchJoinsLookUpEachLaunchThroughTheCorrelationIndex) {
  auto reader = store::Reader::open(path_);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  for (const std::string gpu_table : {"kernels", "memcpy", "memset"}) {
    for (const FlowSide side : {FlowSide::kCalls, FlowSide::kWork}) {
      const std::string start = side == FlowSide::kCalls ? "a" : "g";
      const std::string other = side == FlowSide::kCalls ? "g" : "a";
      const std::string other_table = side == FlowSide::kCalls ? gpu_table : "api_calls";
      for (const std::string& where : {start + ".start_ns >= ? AND " + start + ".start_ns < ?", start + ".id = ?"}) {
        const std::string sql = launchJoinSql(gpu_table, side, where);
        std::vector<std::string> plan;
        auto explained = (*reader)->query("EXPLAIN QUERY PLAN " + sql,
                                          [&](const store::Row& row) { plan.push_back(row.text(3)); }, {0, 1});
        ASSERT_TRUE(explained.ok()) << explained.error().message;
        ASSERT_EQ(plan.size(), 2U) << sql;
        EXPECT_TRUE(plan[0].starts_with("SEARCH " + start + " USING")) << plan[0];
        EXPECT_TRUE(plan[1].starts_with("SEARCH " + other + " USING")) << plan[1];
        EXPECT_NE(plan[1].find(other_table + "_correlation (pid=? AND correlation_id=?)"), std::string::npos)
            << sql << "\n" << plan[1];
      }
    }
  }
}

TEST_F(TimelineBuild, SummarisedLanesReadBackTheExactSlicesOfARange) {
  LoadLimits limits;
  limits.exact_slices_per_lane = 100;
  limits.summary_buckets_log2 = 10;
  auto loaded = loadTimeline({path_}, {}, limits);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const auto& summarised = *loaded.value();
  ASSERT_EQ(summarised.tracks.size(), timeline_->tracks.size());
  EXPECT_EQ(summarised.sliceCount(), timeline_->sliceCount());
  auto source = DetailSource::open(loaded.value());
  ASSERT_TRUE(source.ok());
  const Nanos begin = testing::kBase + 3 * testing::kStepNs;
  const Nanos end = begin + 2'000'000;
  auto window = (*source)->fetch(begin, end);
  ASSERT_TRUE(window.ok());
  const FrameScale frame{begin, 10.0, static_cast<double>(end - begin) / 10.0};
  std::size_t summarised_tracks = 0;
  for (std::uint32_t t = 0; t < summarised.tracks.size(); ++t) {
    const auto& lanes = lanesForFrame(summarised, t, frame, &*window);
    if (&lanes != &summarised.tracks[t].lanes) ++summarised_tracks;
    ASSERT_EQ(lanes.size(), timeline_->tracks[t].lanes.size()) << summarised.tracks[t].title;
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      std::vector<Slice> got;
      std::vector<Slice> want;
      for (const Slice& slice : lanes[l].slices()) {
        if (slice.start_ns >= begin && slice.start_ns < end) got.push_back(slice);
      }
      for (const Slice& slice : timeline_->tracks[t].lanes[l].slices()) {
        if (slice.start_ns >= begin && slice.start_ns < end) want.push_back(slice);
      }
      EXPECT_EQ(got, want) << summarised.tracks[t].title << " lane " << l;
    }
  }
  EXPECT_GE(summarised_tracks, 2U);  // stream 7 and the CUDA API calls hold 2000 slices each
}

TEST_F(TimelineBuild, StatisticsOfARangeSumTheSlicesThatStartInIt) {
  // Range ends are rounded to the statistics' buckets (16 us here): these are far from any slice.
  const Nanos begin = testing::kBase - 100'000;
  const Nanos end = testing::kBase + 2 * testing::kStepNs - 100'000;
  StatsTable table;
  table.setRange(*timeline_, begin, end);
  EXPECT_DOUBLE_EQ(table.steps(), 2.0);
  ASSERT_GT(table.rows(), 0U);
  EXPECT_EQ(table.cell(0, StatsTable::kName), "forward");  // the NVTX range, 2 x 5 ms: the most time
  std::map<std::string, std::pair<std::uint64_t, Nanos>> expected;
  for (const auto& track : timeline_->tracks) {
    if (track.kind == TrackKind::kSteps || track.kind == TrackKind::kCompiles || track.markers()) continue;
    for (const auto& lane : track.lanes) {
      for (const Slice& slice : lane.slices()) {
        if (slice.start_ns < begin || slice.start_ns >= end) continue;
        auto& [count, total] = expected[timeline_->name(slice)];
        ++count;
        total += slice.duration();
      }
    }
  }
  ASSERT_EQ(table.rows(), expected.size());
  for (std::size_t row = 0; row < table.rows(); ++row) {
    const auto& want = expected.at(timeline_->names[table.row(row).name]);
    EXPECT_EQ(table.row(row).count, want.first);
    EXPECT_EQ(table.row(row).total_ns, want.second);
  }
  table.sort(StatsTable::kCount, false);
  EXPECT_EQ(table.cell(0, StatsTable::kCount), "200");  // cudaLaunchKernel: 100 per step
  for (std::size_t row = 1; row < table.rows(); ++row) {
    EXPECT_GE(table.value(row - 1, StatsTable::kCount), table.value(row, StatsTable::kCount));
  }
  table.sort(StatsTable::kName, true);
  for (std::size_t row = 1; row < table.rows(); ++row) {
    EXPECT_LE(table.cell(row - 1, StatsTable::kName), table.cell(row, StatsTable::kName));
  }
}

TEST(TimelineLoad, ReportsStoreErrorsAndCancellation) {
  const auto missing = loadTimeline({"/nonexistent/run.db"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);

  const auto dir = std::filesystem::path(TORCHSCOPE_BINARY_DIR) / "tests" / "gui" / "cancel_test";
  const auto path = testing::writeSampleStore(dir, 2, 10);
  const auto cancelled = loadTimeline({path}, [] { return true; });
  std::filesystem::remove(path);
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(cancelled.error().code, ErrorCode::kInvalidArgument);
}

TEST(TimelineLoad, AnEmptyStoreGivesAnEmptyTimelineWithAUsableSpan) {
  const auto dir = std::filesystem::path(TORCHSCOPE_BINARY_DIR) / "tests" / "gui" / "empty_test";
  const auto path = testing::writeSampleStore(dir, 0, 0);
  const auto loaded = loadTimeline({path});
  std::filesystem::remove(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const Timeline& timeline = *loaded.value();
  EXPECT_EQ(timeline.sliceCount(), 3U);  // the compile, its graph break and its recompile
  EXPECT_LT(timeline.begin_ns, timeline.end_ns);
  EXPECT_EQ(timeline.focus.what, "the whole run");
  EXPECT_TRUE(timeline.gaps.empty());
}

}  // namespace
}  // namespace torchscope::gui
