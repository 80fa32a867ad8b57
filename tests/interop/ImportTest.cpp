// Importer behaviour beyond the golden summaries: malformed input, errors, graph-break text,
// time base and per-rank processes.
#include <gtest/gtest.h>

#include <fstream>

#include "GraphBreakText.h"
#include "TestSupport.h"
#include "torchscope/interop/Import.h"
#include "torchscope/store/Reader.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::interop {
namespace {

using testing::corpus;
using testing::TempDir;

ImportedTrace parseFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> notes;
  auto files = resolveInputs(paths, notes);
  EXPECT_TRUE(files.ok()) << files.error().message;
  auto trace = parseInputs(*files);
  EXPECT_TRUE(trace.ok()) << trace.error().message;
  return std::move(*trace);
}

TEST(TorchTraceImport, CorruptedLineIsSkippedCountedAndReported) {
  const ImportedTrace clean = parseFiles({corpus("torch_trace/simple.log")});
  const ImportedTrace corrupted = parseFiles({corpus("torch_trace/simple_corrupted_json.log")});
  EXPECT_EQ(clean.malformed(), 0);
  ASSERT_EQ(corrupted.malformed(), 1);
  EXPECT_EQ(corrupted.skipped.at(0).file, "simple_corrupted_json.log");
  EXPECT_EQ(corrupted.rows<store::Compile>().size(), clean.rows<store::Compile>().size());
  bool reported = false;
  for (const auto& diagnostic : corrupted.rows<store::Diagnostic>()) {
    reported |= diagnostic.severity == "warning" && diagnostic.count == 1 &&
                diagnostic.message.find("malformed") != std::string::npos;
  }
  EXPECT_TRUE(reported);
}

TEST(TorchTraceImport, EveryCorpusLogHasNoMalformedLinesButTheCorruptedOne) {
  for (const char* log : {"artifacts", "cache_hit_miss", "chromium_events", "comp_failure", "comp_metrics", "simple"}) {
    EXPECT_EQ(parseFiles({corpus(std::string("torch_trace/") + log + ".log")}).malformed(), 0) << log;
  }
}

TEST(TorchTraceImport, RanksBecomeProcesses) {
  const ImportedTrace trace = parseFiles({corpus("torch_trace/multi_rank_logs")});
  ASSERT_EQ(trace.rows<store::Process>().size(), 4U);
  for (std::size_t rank = 0; rank < 4; ++rank)
    EXPECT_EQ(trace.rows<store::Process>()[rank].rank, static_cast<std::int64_t>(rank));
  std::map<std::int64_t, int> recompiles_per_pid;
  for (const auto& recompile : trace.rows<store::Recompile>()) ++recompiles_per_pid[recompile.pid];
  EXPECT_EQ(recompiles_per_pid[trace.rows<store::Process>()[1].pid], 14);
  EXPECT_EQ(recompiles_per_pid[trace.rows<store::Process>()[3].pid], 6);
  for (const auto& recompile : trace.rows<store::Recompile>()) {
    EXPECT_EQ(recompile.cause, "dynamic-shape");
    EXPECT_FALSE(recompile.co_name.empty());
  }
}

TEST(TorchTraceImport, GlogTimesMapOntoUnixTime) {
  // comp_metrics.log: "V0403 07:28:48.052" (US Pacific) with start_time 1712154528.0523684.
  const ImportedTrace trace = parseFiles({corpus("torch_trace/comp_metrics.log")});
  ASSERT_EQ(trace.rows<store::Compile>().size(), 3U);
  EXPECT_NEAR(static_cast<double>(trace.rows<store::Compile>()[0].start_ns), 1'712'154'528'052'368'400.0, 1000.0);
  for (const auto& process : trace.rows<store::Process>()) {
    EXPECT_GE(process.start_ns, 1'712'154'528'051'000'000);
    EXPECT_LE(process.start_ns, 1'712'154'528'053'000'000);
  }
  // Old field names: entire_frame_compile_time_s is the whole duration.
  EXPECT_EQ(trace.rows<store::Compile>()[0].end_ns - trace.rows<store::Compile>()[0].start_ns, 12'439'489);
  EXPECT_EQ(trace.rows<store::Compile>()[0].attempt, 1);
  EXPECT_EQ(trace.rows<store::GraphBreak>().size(),
            2U);  // from restart_reasons: this log predates the graph-break artifact
}

TEST(TorchTraceImport, FailureKeepsTypeAndReason) {
  const ImportedTrace trace = parseFiles({corpus("torch_trace/comp_failure.log")});
  ASSERT_EQ(trace.rows<store::Compile>().size(), 1U);
  EXPECT_EQ(trace.rows<store::Compile>()[0].status, "failed");
  EXPECT_EQ(trace.rows<store::Compile>()[0].fail_type, "BackendCompilerFailed");
  EXPECT_NE(trace.rows<store::Compile>()[0].fail_reason.find("broken backend"), std::string::npos);
  EXPECT_GT(trace.rows<store::Compile>()[0].dynamo_ns, 0);
}

TEST(TorchTraceImport, GraphBreakArtifactsNameTheUserLine) {
  const ImportedTrace trace = parseFiles({testing::testData("graph_breaks.log.gz")});
  ASSERT_FALSE(trace.rows<store::GraphBreak>().empty());
  const auto& first = trace.rows<store::GraphBreak>().front();
  EXPECT_EQ(first.file, "/tmp/tt/gb.py");
  EXPECT_EQ(first.line, 4);
  EXPECT_EQ(first.function, "fn");
  EXPECT_EQ(first.break_type, "Data-dependent branching");
  EXPECT_NE(first.hints.find("torch.cond"), std::string::npos);
  EXPECT_NE(first.user_stack.find("gb.py"), std::string::npos);
  ASSERT_FALSE(trace.rows<store::Recompile>().empty());
  EXPECT_EQ(trace.rows<store::Recompile>().front().cause, "dynamic-shape");
}

TEST(GraphBreakText, ReadsTheRenderedMessage) {
  store::GraphBreak graph_break;
  parseGraphBreakText(
      "Graph break in user code at /src/model.py:42\n"
      "Graph Break Reason: Encountered graph break when attempting to trace CALL:\n\n"
      "Failed to trace builtin operator\n"
      "  Explanation: Dynamo does not know how to trace builtin operator `print`\n"
      "  Hint: Avoid calling builtin `print`.\n"
      "  Hint: Use reorderable_logging_functions.\n\n"
      "User code traceback:\n"
      "  File \"/src/train.py\", line 10, in <module>\n    model(x)\n"
      "  File \"/src/model.py\", line 42, in forward\n    print(x)\n\n"
      "Traceback (most recent call last):\n  File \"/torch/_dynamo/x.py\", line 1, in f\n",
      graph_break);
  EXPECT_EQ(graph_break.file, "/src/model.py");
  EXPECT_EQ(graph_break.line, 42);
  EXPECT_EQ(graph_break.function, "forward");
  EXPECT_EQ(graph_break.break_type, "Failed to trace builtin operator");
  EXPECT_EQ(graph_break.explanation, "Dynamo does not know how to trace builtin operator `print`");
  EXPECT_EQ(nlohmann::json::parse(graph_break.hints).size(), 2U);
  EXPECT_EQ(nlohmann::json::parse(graph_break.user_stack).size(), 2U);
}

TEST(TorchTraceImport, LogWithoutAbsoluteTimesSaysWhatItAssumed) {
  ImportedTrace trace;
  const std::string log =
      "V0102 03:04:05.000006 77 torch/_dynamo/convert_frame.py:1] {\"dynamo_start\": {\"stack\": []}, \"frame_id\": 0, "
      "\"frame_compile_id\": 0, \"attempt\": 0}\n"
      "not a glog line\n"
      "V0102 03:04:06.000000 77 torch/_dynamo/utils.py:1] {\"compilation_metrics\": {\"co_name\": \"f\"}, \"frame_id\": 0, "
      "\"frame_compile_id\": 0, \"attempt\": 0}\n";
  ASSERT_TRUE(parseTorchTrace(log, {"tiny.log", 5, 2020}, trace).ok());
  ASSERT_EQ(trace.rows<store::Compile>().size(), 1U);
  // 2020-01-02T03:04:05.000006Z, taken as UTC
  EXPECT_EQ(trace.rows<store::Compile>()[0].start_ns, 1'577'934'245'000'006'000);
  EXPECT_EQ(trace.rows<store::Compile>()[0].end_ns, 1'577'934'246'000'000'000);
  EXPECT_EQ(trace.rows<store::Process>().at(0).rank, 5);
  EXPECT_EQ(trace.malformed(), 1);
  ASSERT_FALSE(trace.rows<store::Diagnostic>().empty());
  EXPECT_NE(trace.rows<store::Diagnostic>()[0].message.find("UTC"), std::string::npos);
}

TEST(KinetoImport, CpuOnlyTraceHasNoGpuWork) {
  const ImportedTrace trace = parseFiles({corpus("kineto/cpu_only_rank34.json.gz")});
  EXPECT_TRUE(trace.rows<store::Kernel>().empty());
  EXPECT_TRUE(trace.rows<store::Memcpy>().empty());
  EXPECT_FALSE(trace.rows<store::CpuOp>().empty());
  EXPECT_EQ(trace.malformed(), 0);
  ASSERT_FALSE(trace.rows<store::Process>().empty());
  EXPECT_EQ(trace.rows<store::Process>()[0].rank, 34);
  EXPECT_EQ(trace.rows<store::Process>()[0].world_size, 300);
}

TEST(KinetoImport, CopiesSyncsAndCorrelation) {
  const ImportedTrace trace = parseFiles({corpus("kineto/critical_path_cuda_event_sync_event_sync_trace.json.gz")});
  ASSERT_EQ(trace.rows<store::Memcpy>().size(), 1U);
  EXPECT_EQ(trace.rows<store::Memcpy>()[0].copy_kind, "DtoH");
  EXPECT_EQ(trace.rows<store::Memcpy>()[0].dst_kind, "pageable");
  EXPECT_TRUE(trace.rows<store::Memcpy>()[0].pageable);
  ASSERT_EQ(trace.rows<store::Sync>().size(), 4U);
  for (const auto& sync : trace.rows<store::Sync>()) EXPECT_EQ(sync.pid, 948300) << sync.op;
  for (const auto& kernel : trace.rows<store::Kernel>()) EXPECT_EQ(kernel.pid, 948300);
  ASSERT_EQ(trace.rows<store::Step>().size(), 1U);
  EXPECT_EQ(trace.rows<store::Step>()[0].index, 100);
  ASSERT_FALSE(trace.rows<store::Device>().empty());
  EXPECT_EQ(trace.rows<store::Device>()[0].compute_major, 8);
}

TEST(KinetoImport, BaseTimeAndFractionalMicroseconds) {
  ImportedTrace trace;
  const std::string text = R"({"baseTimeNanoseconds": 1000000000000, "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.5, "dur": 2.25, "args": {"correlation": 9}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 42, "tid": 43, "ts": 1.0, "dur": 0.1,
     "args": {"correlation": 9}},
    {"ph": "X", "cat": "kernel", "name": "bad", "pid": 0, "tid": 7, "ts": "soon"},
    17
  ]})";
  ASSERT_TRUE(parseKineto(text, "inline", trace).ok());
  ASSERT_EQ(trace.rows<store::Kernel>().size(), 1U);
  EXPECT_EQ(trace.rows<store::Kernel>()[0].start_ns, 1'000'000'001'500);
  EXPECT_EQ(trace.rows<store::Kernel>()[0].end_ns, 1'000'000'003'750);
  EXPECT_EQ(trace.rows<store::Kernel>()[0].pid, 42);
  EXPECT_EQ(trace.malformed(), 2);
}

TEST(KinetoImport, MemoryEventsBecomeAllocationsAndCounterSeries) {
  ImportedTrace trace;
  const std::string text = R"({"traceEvents": [
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 10,
     "args": {"Addr": 4096, "Bytes": 1024, "Total Allocated": 1024, "Total Reserved": 2048, "Device Type": 0,
              "Device Id": -1}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 11,
     "args": {"Addr": 8192, "Bytes": 4096, "Total Allocated": 4096, "Total Reserved": 8192, "Device Type": 1,
              "Device Id": 2}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 12,
     "args": {"Addr": 4096, "Bytes": -1024, "Total Allocated": 0, "Total Reserved": 2048, "Device Type": 0,
              "Device Id": -1}},
    {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 5, "ts": "late"}
  ]})";
  ASSERT_TRUE(parseKineto(text, "inline", trace).ok());
  ASSERT_EQ(trace.rows<store::MemoryEvent>().size(), 3U);
  EXPECT_EQ(trace.rows<store::MemoryEvent>()[0].operation, "alloc");
  EXPECT_EQ(trace.rows<store::MemoryEvent>()[0].device, -1);
  EXPECT_EQ(trace.rows<store::MemoryEvent>()[0].memory_kind, "cpu");
  EXPECT_EQ(trace.rows<store::MemoryEvent>()[0].address, 4096);
  EXPECT_EQ(trace.rows<store::MemoryEvent>()[0].ts_ns, 10'000);
  EXPECT_EQ(trace.rows<store::MemoryEvent>()[1].device, 2);
  EXPECT_EQ(trace.rows<store::MemoryEvent>()[1].memory_kind, "device");
  EXPECT_EQ(trace.rows<store::MemoryEvent>()[1].total_reserved, 8192);
  EXPECT_EQ(trace.rows<store::MemoryEvent>()[2].operation, "free");
  EXPECT_EQ(trace.rows<store::MemoryEvent>()[2].bytes, 1024);
  ASSERT_EQ(trace.rows<store::MemorySample>().size(), 6U);
  EXPECT_EQ(trace.rows<store::MemorySample>()[0].series, "cpu.allocated");
  EXPECT_EQ(trace.rows<store::MemorySample>()[1].series, "cpu.reserved");
  EXPECT_EQ(trace.rows<store::MemorySample>()[2].series, "cuda.allocated");
  EXPECT_EQ(trace.rows<store::MemorySample>()[2].device, 2);
  EXPECT_EQ(trace.rows<store::MemorySample>()[4].value, 0);
  EXPECT_EQ(trace.rows<store::MemorySample>()[4].step, -1);
  EXPECT_EQ(trace.malformed(), 1);
}

TEST(KinetoImport, TruncatedDocumentKeepsWhatCameBefore) {
  ImportedTrace trace;
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mu)";
  ASSERT_TRUE(parseKineto(text, "cut", trace).ok());
  EXPECT_EQ(trace.rows<store::CpuOp>().size(), 1U);
  EXPECT_EQ(trace.malformed(), 1);
}

TEST(ImportErrors, UnknownFormatMissingFileAndEmptyDirectory) {
  TempDir dir;
  std::ofstream(dir.file("notes.txt")) << "hello\n";
  auto unknown = importToStore({dir.file("notes.txt")}, dir.file("a.db"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(unknown.error().message.find("neither"), std::string::npos);
  auto missing = importToStore({dir.file("absent.log")}, dir.file("b.db"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  auto empty = importToStore({dir.file("")}, dir.file("c.db"));
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, ErrorCode::kInvalidArgument);
  std::ofstream(dir.file("array.json")) << "[1, 2, 3]";
  auto not_kineto = importToStore({dir.file("array.json")}, dir.file("d.db"));
  ASSERT_FALSE(not_kineto.ok());
  EXPECT_EQ(not_kineto.error().code, ErrorCode::kInvalidArgument);
}

TEST(ImportToStore, MixedInputsShareOneStoreAndDiagnostics) {
  TempDir dir;
  auto report = importToStore({corpus("torch_trace/simple_corrupted_json.log"), corpus("kineto/critical_path_alexnet.json.gz")},
                              dir.file("run.db"), "torchscope import test");
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->files.size(), 2U);
  EXPECT_EQ(report->malformed, 1);
  EXPECT_NE(summarize(*report).find("skipped 1 malformed"), std::string::npos);
  auto reader = store::Reader::open(dir.file("run.db"));
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->run().value().source, "import:mixed");
  auto counts = (*reader)->counts();
  EXPECT_EQ(counts.value().at("kernels"), 79);
  EXPECT_EQ(counts.value().at("compiles"), 1);
  EXPECT_EQ(counts.value().at("diagnostics"), 1);
}

}  // namespace
}  // namespace torchscope::interop
