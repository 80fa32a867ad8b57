// Chrome-trace export: structure that Perfetto and chrome://tracing accept, and a round trip
// back through the Kineto importer that keeps every count.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>

#include "TestSupport.h"
#include "torchscope/interop/ChromeExport.h"
#include "torchscope/interop/Import.h"
#include "torchscope/store/Reader.h"
#include "torchscope/testing/ExtremeStore.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::interop {
namespace {

using nlohmann::json;
using testing::corpus;
using testing::TempDir;

json exportToJson(const std::string& store, const std::string& path) {
  auto report = exportChromeTrace(store, path);
  EXPECT_TRUE(report.ok()) << report.error().message;
  std::ifstream file(path);
  json trace = json::parse(file, nullptr, false);
  EXPECT_FALSE(trace.is_discarded()) << "not valid JSON: " << path;
  return trace;
}

std::map<std::string, std::int64_t> counts(const std::string& store) {
  auto reader = store::Reader::open(store);
  EXPECT_TRUE(reader.ok());
  return (*reader)->counts().value();
}

// What the trace viewers need: known phases, integer pid/tid, numeric ts, dur on X, ids on flows.
void expectWellFormed(const json& trace) {
  ASSERT_TRUE(trace.is_object());
  EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
  ASSERT_TRUE(trace.at("traceEvents").is_array());
  const std::set<std::string> phases = {"M", "X", "i", "s", "f", "C"};
  std::map<std::int64_t, int> flow_balance;
  for (const auto& event : trace["traceEvents"]) {
    ASSERT_TRUE(event.is_object());
    const std::string phase = event.at("ph");
    EXPECT_TRUE(phases.count(phase) != 0) << event.dump();
    EXPECT_TRUE(event.at("pid").is_number_integer()) << event.dump();
    EXPECT_TRUE(event.at("tid").is_number_integer()) << event.dump();
    if (phase == "M") {
      EXPECT_TRUE(event.at("args").at("name").is_string());
      continue;
    }
    EXPECT_TRUE(event.at("ts").is_number()) << event.dump();
    if (phase == "X") {
      EXPECT_GE(event.at("dur").get<double>(), 0.0) << event.dump();
    }
    if (phase == "s") ++flow_balance[event.at("id").get<std::int64_t>()];
    if (phase == "f") {
      EXPECT_EQ(event.at("bp"), "e");
      --flow_balance[event.at("id").get<std::int64_t>()];
    }
  }
  for (const auto& [id, balance] : flow_balance) EXPECT_EQ(balance, 0) << "flow " << id;
}

std::map<std::string, int> byCategory(const json& trace, const std::string& phase) {
  std::map<std::string, int> categories;
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("ph", "") == phase) ++categories[event.value("cat", "")];
  }
  return categories;
}

TEST(ChromeExport, KinetoTraceExportsNamedTracksSlicesAndFlows) {
  TempDir dir;
  ASSERT_TRUE(importToStore({corpus("kineto/critical_path_alexnet.json.gz")}, dir.file("run.db")).ok());
  const json trace = exportToJson(dir.file("run.db"), dir.file("trace.json"));
  expectWellFormed(trace);
  const auto rows = counts(dir.file("run.db"));
  const auto slices = byCategory(trace, "X");
  EXPECT_EQ(slices.at("kernel"), rows.at("kernels"));
  EXPECT_EQ(slices.at("gpu_memcpy"), rows.at("memcpy"));
  EXPECT_EQ(slices.at("cuda_sync"), rows.at("syncs"));
  EXPECT_EQ(byCategory(trace, "i").at("sync"), rows.at("syncs"));
  EXPECT_EQ(byCategory(trace, "f").at("ac2g"), rows.at("kernels") + rows.at("memcpy") + rows.at("memset"));
  bool gpu_named = false, stream_named = false;
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("ph", "") != "M") continue;
    const std::string label = event["args"]["name"];
    gpu_named |= event["name"] == "process_name" && label.rfind("GPU 0", 0) == 0;
    stream_named |= event["name"] == "thread_name" && label == "stream 7";
  }
  EXPECT_TRUE(gpu_named);
  EXPECT_TRUE(stream_named);
}

TEST(ChromeExport, RoundTripThroughTheKinetoImporterKeepsCounts) {
  for (const char* input : {"kineto/critical_path_alexnet.json.gz", "kineto/critical_path_cuda_event_sync_event_sync_trace.json.gz",
                            "kineto/timeline_analysis_sampled_rank-0.json.gz"}) {
    SCOPED_TRACE(input);
    TempDir dir;
    ASSERT_TRUE(importToStore({corpus(input)}, dir.file("first.db")).ok());
    ASSERT_TRUE(exportChromeTrace(dir.file("first.db"), dir.file("trace.json")).ok());
    auto again = importToStore({dir.file("trace.json")}, dir.file("second.db"));
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->malformed, 0);
    const auto first = counts(dir.file("first.db"));
    const auto second = counts(dir.file("second.db"));
    for (const char* table : {"kernels", "memcpy", "memset", "api_calls", "syncs", "cpu_ops", "steps", "devices", "processes"}) {
      EXPECT_EQ(first.at(table), second.at(table)) << table;
    }
    const json before = testing::summarizeStore(dir.file("first.db"));
    const json after = testing::summarizeStore(dir.file("second.db"));
    for (const char* key : {"kernel_us_per_stream", "memcpy", "syncs", "steps", "cpu_op_categories", "kernels_with_correlation",
                            "devices", "process_ranks"}) {
      EXPECT_EQ(before.value(key, json()), after.value(key, json())) << key;
    }
    EXPECT_EQ(before["run"]["start_utc"], after["run"]["start_utc"]);
  }
}

TEST(ChromeExport, CompileEventsBecomeSlicesAndMarkers) {
  TempDir dir;
  ASSERT_TRUE(importToStore({testing::testData("graph_breaks.log.gz")}, dir.file("run.db")).ok());
  const json trace = exportToJson(dir.file("run.db"), dir.file("trace.json"));
  expectWellFormed(trace);
  const auto rows = counts(dir.file("run.db"));
  EXPECT_EQ(byCategory(trace, "X").at("torch_compile"), rows.at("compiles"));
  const auto markers = byCategory(trace, "i");
  EXPECT_EQ(markers.at("graph_break"), rows.at("graph_breaks"));
  EXPECT_EQ(markers.at("recompile"), rows.at("recompiles"));
}

TEST(ChromeExport, MemoryBecomesCounterTracksAndItsEventsSurviveTheRoundTrip) {
  TempDir dir;
  ASSERT_TRUE(importToStore({testing::testData("profile_memory.json.gz")}, dir.file("first.db")).ok());
  const json trace = exportToJson(dir.file("first.db"), dir.file("trace.json"));
  expectWellFormed(trace);
  const auto rows = counts(dir.file("first.db"));
  ASSERT_GT(rows.at("memory_samples"), 0);
  std::map<std::string, std::int64_t> counters;
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("ph", "") != "C") continue;
    ++counters[event["name"].get<std::string>()];
    EXPECT_TRUE(event["args"]["bytes"].is_number_integer()) << event.dump();
  }
  EXPECT_EQ(counters["cpu.allocated"] + counters["cpu.reserved"], rows.at("memory_samples"));
  EXPECT_EQ(byCategory(trace, "i").at("cpu_instant_event"), rows.at("memory_events"));

  auto again = importToStore({dir.file("trace.json")}, dir.file("second.db"));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->malformed, 0);
  EXPECT_EQ(counts(dir.file("second.db")).at("memory_events"), rows.at("memory_events"));
  EXPECT_EQ(testing::summarizeStore(dir.file("first.db"))["memory"], testing::summarizeStore(dir.file("second.db"))["memory"]);
}

// Times at the int64 edges (INT64_MIN to INT64_MAX, ends before starts): every time from the origin (the earliest
// event, INT64_MIN) is clamped to the int64 range and printed exactly in microseconds, no duration is negative, a
// release of INT64_MIN bytes keeps its sign, and the trace imports back.
TEST(ChromeExport, TimesAtTheInt64EdgesExportClampedAndImportBack) {
  TempDir dir;
  ASSERT_EQ(torchscope::testing::writeExtremeValuesStore(dir.file("extreme.db")), "");
  const json trace = exportToJson(dir.file("extreme.db"), dir.file("trace.json"));
  expectWellFormed(trace);
  double latest = 0;
  bool replaced = false;
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("ph", "") == "M") {
      replaced |= event["args"]["name"].get<std::string>().find("\xEF\xBF\xBD") != std::string::npos;
      continue;
    }
    const double ts = event.at("ts").get<double>();
    EXPECT_GE(ts, 0.0) << event.dump();
    latest = std::max(latest, ts);
    if (event.value("name", "") == "[memory]" && event["args"]["operation"] == "free") {
      EXPECT_EQ(event["args"]["Bytes"], std::numeric_limits<std::int64_t>::max()) << event.dump();
    }
  }
  EXPECT_DOUBLE_EQ(latest, 9223372036854775.807);  // INT64_MAX nanoseconds after INT64_MIN: clamped
  EXPECT_TRUE(replaced);  // names that are not UTF-8
  std::ifstream text(dir.file("trace.json"));
  const std::string exported((std::istreambuf_iterator<char>(text)), std::istreambuf_iterator<char>());
  EXPECT_NE(exported.find("\"ts\":9223372036854775.807"), std::string::npos);
  EXPECT_NE(exported.find("\"dur\":9223372036854775.807"), std::string::npos);

  auto merged = exportMergedChromeTrace({dir.file("extreme.db"), dir.file("extreme.db")}, dir.file("merged.json"));
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  std::ifstream merged_file(dir.file("merged.json"));
  const json merged_trace = json::parse(merged_file, nullptr, false);
  ASSERT_FALSE(merged_trace.is_discarded());
  for (const auto& event : merged_trace["traceEvents"]) {
    if (event.value("ph", "") == "M") continue;
    EXPECT_TRUE(event.at("ts").is_number()) << event.dump();
    if (event.value("ph", "") == "X") {
      EXPECT_GE(event.at("dur").get<double>(), 0.0) << event.dump();
    }
  }

  // Times beyond INT64_MAX nanoseconds are skipped as malformed; the rest imports.
  auto again = importToStore({dir.file("trace.json")}, dir.file("again.db"));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_GT(counts(dir.file("again.db")).at("kernels"), 0);
}

TEST(ChromeExport, NotAStoreIsAnError) {
  TempDir dir;
  std::ofstream(dir.file("x.db")) << "not sqlite";
  auto report = exportChromeTrace(dir.file("x.db"), dir.file("out.json"));
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.error().code, ErrorCode::kIo);
}

}  // namespace
}  // namespace torchscope::interop
