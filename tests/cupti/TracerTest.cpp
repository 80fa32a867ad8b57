// The tracer on a fake CUPTI, writing into a real SQLite store.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <tuple>

#include "CuptiTestSupport.h"
#include "torchscope/cupti/FakeCupti.h"
#include "torchscope/cupti/GpuTracer.h"
#include "torchscope/store/Reader.h"

namespace torchscope::cupti {
namespace {

using testing::kernelRecord;
using testing::memcpyRecord;
using testing::runtimeRecord;
using testing::syncRecord;

// An API record as CUPTI writes it in this process.
CUpti_ActivityAPI launchRecord(std::uint32_t correlation, std::uint64_t start, std::uint64_t end) {
  auto record = runtimeRecord(correlation, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, start, end);
  record.processId = static_cast<std::uint32_t>(getpid());
  return record;
}

bool locateTrainLine(SourceLocation* out) {
  out->file = "train.py";
  out->line = 42;
  out->function = "train_step";
  out->stack_json = R"([{"file":"train.py","line":42,"function":"train_step"}])";
  return true;
}

class CuptiTracer : public ::testing::Test {
 protected:
  void SetUp() override {
    auto writer = store::Writer::open(dir_.file("run.db"));
    ASSERT_TRUE(writer) << writer.error().message;
    writer_ = std::move(writer.value());
    fake_ = std::make_shared<FakeCupti>();
  }
  void TearDown() override { stopGpuTracing(); }

  Result<void> start(GpuTracingOptions options = {}, SourceLocator locator = nullptr) {
    return startGpuTracingWith(fake_, *writer_, options, locator);
  }
  std::unique_ptr<store::Reader> closeAndRead() {
    stopGpuTracing();
    EXPECT_TRUE(writer_->close());
    auto reader = store::Reader::open(dir_.file("run.db"));
    EXPECT_TRUE(reader) << reader.error().message;
    return std::move(reader.value());
  }
  template <class T>
  std::vector<T> load(const store::Reader& reader) {
    auto rows = reader.load<T>();
    EXPECT_TRUE(rows) << rows.error().message;
    return rows ? rows.value() : std::vector<T>{};
  }
  static const store::Diagnostic* find(const std::vector<store::Diagnostic>& all, const std::string& part) {
    for (const auto& d : all) {
      if (d.message.find(part) != std::string::npos) return &d;
    }
    return nullptr;
  }

  testing::TempDir dir_;
  std::unique_ptr<store::Writer> writer_;
  std::shared_ptr<FakeCupti> fake_;
};

TEST_F(CuptiTracer, StartEnablesKindsAndStopReleasesCupti) {
  ASSERT_TRUE(start());
  const auto kinds = fake_->enabledKinds();
  for (auto kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MARKER,
                    CUPTI_ACTIVITY_KIND_OVERHEAD}) {
    EXPECT_EQ(kinds.count(kind), 1u) << kind;
  }
  EXPECT_EQ(kinds.count(CUPTI_ACTIVITY_KIND_DRIVER), 0u);
  const auto launches = fake_->driverApiRecords();
  EXPECT_EQ(launches.count(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel), 1u) << "Triton's kernels launch through it";
  EXPECT_EQ(launches.count(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx), 1u);
  EXPECT_EQ(launches.count(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch), 1u);
  EXPECT_EQ(launches.count(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2), 0u);
  EXPECT_TRUE(fake_->callbackEnabled(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020));
  EXPECT_TRUE(gpuTracingStats().active);
  EXPECT_TRUE(gpuTracingStats().clock_from_callback);
  EXPECT_FALSE(start()) << "a second start must be refused";
  stopGpuTracing();
  EXPECT_TRUE(fake_->enabledKinds().empty());
  EXPECT_TRUE(fake_->driverApiRecords().empty());
  EXPECT_FALSE(fake_->subscribed());
  EXPECT_FALSE(gpuTracingStats().active);
  stopGpuTracing();  // twice is fine
}

TEST_F(CuptiTracer, OutOfOrderBuffersRoundTripWithCorrelation) {
  ASSERT_TRUE(start());
  // The later kernel's buffer completes first; the API call that launched each kernel shares its id.
  SyntheticBuffer late;
  late.add(kernelRecord(2, 5'000, 6'000, "late_kernel"))
      .add(launchRecord(2, 4'000, 4'100));
  SyntheticBuffer early;
  early.add(kernelRecord(1, 1'000, 2'000, "early_kernel"))
      .add(launchRecord(1, 500, 600))
      .add(runtimeRecord(3, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 700, 710))
      .add(memcpyRecord(4, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                        CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, false));
  ASSERT_TRUE(fake_->deliver(late.bytes()));
  ASSERT_TRUE(fake_->deliver(early.bytes()));
  EXPECT_EQ(gpuTracingStats().records, 6u);
  auto reader = closeAndRead();

  const auto kernels = load<store::Kernel>(*reader);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name, "early_kernel");  // the store returns time order
  EXPECT_EQ(kernels[1].name, "late_kernel");
  const auto calls = load<store::ApiCall>(*reader);
  ASSERT_EQ(calls.size(), 2u) << "cudaGetDevice is noise and not stored";
  const auto memcpys = load<store::Memcpy>(*reader);
  ASSERT_EQ(memcpys.size(), 1u);
  EXPECT_TRUE(memcpys[0].pageable);

  std::vector<std::pair<std::string, std::string>> joined;
  auto query = reader->query(
      "SELECT a.name, k.name FROM api_calls_v a JOIN kernels_v k "
      "ON k.pid = a.pid AND k.correlation_id = a.correlation_id ORDER BY k.start_ns",
      [&](const store::Row& row) { joined.emplace_back(row.text(0), row.text(1)); });
  ASSERT_TRUE(query) << query.error().message;
  ASSERT_EQ(joined.size(), 2u);
  EXPECT_EQ(joined[0], std::make_pair(std::string("cudaLaunchKernel"), std::string("early_kernel")));
  EXPECT_EQ(joined[1], std::make_pair(std::string("cudaLaunchKernel"), std::string("late_kernel")));
}

// A Triton kernel (torch.compile, AOTInductor on a GPU) is launched by cuLaunchKernel: its launch row comes from the
// driver records the tracer enables one by one, and joins the kernel as a runtime launch does.
TEST_F(CuptiTracer, KernelsLaunchedThroughTheDriverJoinTheirLaunch) {
  ASSERT_TRUE(start());
  auto triton_launch = runtimeRecord(9, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 3'000, 3'050);
  triton_launch.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  triton_launch.processId = static_cast<std::uint32_t>(getpid());
  auto alloc = triton_launch;
  alloc.cbid = CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2;
  alloc.correlationId = 10;
  SyntheticBuffer buffer;
  buffer.add(triton_launch).add(alloc).add(kernelRecord(9, 3'100, 3'900, "triton_poi_fused_add_0"));
  ASSERT_TRUE(fake_->deliver(buffer.bytes()));
  auto reader = closeAndRead();
  std::vector<std::tuple<std::string, std::string, std::string>> joined;
  auto query = reader->query(
      "SELECT a.name, a.api, k.name FROM api_calls_v a JOIN kernels_v k "
      "ON k.pid = a.pid AND k.correlation_id = a.correlation_id",
      [&](const store::Row& row) { joined.emplace_back(row.text(0), row.text(1), row.text(2)); });
  ASSERT_TRUE(query) << query.error().message;
  ASSERT_EQ(joined.size(), 1u);
  EXPECT_EQ(joined[0], std::make_tuple(std::string("cuLaunchKernel"), std::string("driver"),
                                       std::string("triton_poi_fused_add_0")));
  EXPECT_EQ(load<store::ApiCall>(*reader).size(), 1u) << "other driver calls stay out without trace_driver_api";
}

// With trace_driver_api the DRIVER kind records every driver call, the noise silenced at the source, also after a
// capture window reopens (enabling the kind again turns every call back on).
TEST_F(CuptiTracer, EveryDriverCallOnlyWhenAskedAndItsNoiseSilenced) {
  GpuTracingOptions options;
  options.trace_driver_api = true;
  ASSERT_TRUE(start(options));
  EXPECT_EQ(fake_->enabledKinds().count(CUPTI_ACTIVITY_KIND_DRIVER), 1u);
  EXPECT_TRUE(fake_->driverApiRecords().empty());
  EXPECT_EQ(fake_->silencedDriverApis().count(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent), 1u);
  setGpuTracingCapture(false);
  EXPECT_EQ(fake_->enabledKinds().count(CUPTI_ACTIVITY_KIND_DRIVER), 0u);
  setGpuTracingCapture(true);
  EXPECT_EQ(fake_->silencedDriverApis().count(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent), 1u);
}

// Outside the capture window no launch is recorded, through the runtime or the driver.
TEST_F(CuptiTracer, DriverLaunchRecordsFollowTheCaptureWindow) {
  GpuTracingOptions options;
  options.capture_at_start = false;
  ASSERT_TRUE(start(options));
  EXPECT_TRUE(fake_->driverApiRecords().empty());
  setGpuTracingCapture(true);
  EXPECT_EQ(fake_->driverApiRecords().count(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel), 1u);
  setGpuTracingCapture(false);
  EXPECT_TRUE(fake_->driverApiRecords().empty());
}

TEST_F(CuptiTracer, DroppedRecordsBecomeDiagnostics) {
  ASSERT_TRUE(start());
  SyntheticBuffer buffer;
  buffer.add(kernelRecord(1, 10, 20, "k"));
  ASSERT_TRUE(fake_->deliver(buffer.bytes(), 17));
  ASSERT_TRUE(fake_->deliver(buffer.bytes(), 3));
  auto reader = closeAndRead();
  const auto diagnostics = load<store::Diagnostic>(*reader);
  const auto* dropped = find(diagnostics, "dropped by CUPTI");
  ASSERT_NE(dropped, nullptr);
  EXPECT_EQ(dropped->count, 20);
  EXPECT_EQ(dropped->severity, "warning");
}

TEST_F(CuptiTracer, BufferCapRefusesAndCounts) {
  GpuTracingOptions options;
  options.max_buffer_bytes = 64 << 10;
  options.buffer_bytes = 32 << 10;
  ASSERT_TRUE(start(options));
  EXPECT_TRUE(fake_->holdBuffer());
  EXPECT_TRUE(fake_->holdBuffer());
  EXPECT_FALSE(fake_->holdBuffer()) << "a third buffer would pass the 64 KiB cap";
  SyntheticBuffer buffer;
  buffer.add(kernelRecord(1, 10, 20, "k"));
  EXPECT_FALSE(fake_->deliver(buffer.bytes(), 5));
  auto stats = gpuTracingStats();
  EXPECT_EQ(stats.buffers_refused, 2u);
  EXPECT_LE(stats.buffer_bytes_peak, options.max_buffer_bytes);
  fake_->completeHeld();
  EXPECT_EQ(gpuTracingStats().buffer_bytes_in_use, 0u);
  EXPECT_TRUE(fake_->deliver(buffer.bytes()));
  auto reader = closeAndRead();
  const auto diagnostics = load<store::Diagnostic>(*reader);
  const auto* refused = find(diagnostics, "refused at the 64 KiB cap");
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->count, 2);
  ASSERT_NE(find(diagnostics, "dropped by CUPTI"), nullptr);
  EXPECT_EQ(load<store::Kernel>(*reader).size(), 1u);
}

TEST_F(CuptiTracer, BlockingCallsCarryTheLocatedLine) {
  ASSERT_TRUE(start({}, &locateTrainLine));
  fake_->callApi(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 99,
                 [] { std::this_thread::sleep_for(std::chrono::milliseconds(3)); });
  fake_->callApi(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 100);
  fake_->callApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 101);  // not blocking: no row
  EXPECT_EQ(gpuTracingStats().syncs_located, 2u);
  // CUPTI's own record of the same stream sync arrives later and must not be stored twice.
  SyntheticBuffer buffer;
  buffer.add(syncRecord(99, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE))
      .add(syncRecord(200, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE));
  ASSERT_TRUE(fake_->deliver(buffer.bytes()));
  auto reader = closeAndRead();

  auto syncs = load<store::Sync>(*reader);
  ASSERT_EQ(syncs.size(), 3u);
  std::sort(syncs.begin(), syncs.end(), [](auto& a, auto& b) { return a.correlation_id < b.correlation_id; });
  const auto& stream = syncs[0];
  EXPECT_EQ(stream.correlation_id, 99);
  EXPECT_EQ(stream.sync_kind, "stream");
  EXPECT_EQ(stream.op, "cudaStreamSynchronize");
  EXPECT_EQ(stream.origin, "cupti");
  EXPECT_EQ(stream.file, "train.py");
  EXPECT_EQ(stream.line, 42);
  EXPECT_EQ(stream.function, "train_step");
  EXPECT_NE(stream.stack.find("train_step"), std::string::npos);
  EXPECT_EQ(stream.pid, getpid());
  EXPECT_GE(stream.end_ns - stream.start_ns, 3'000'000);
  EXPECT_EQ(syncs[1].sync_kind, "memcpy");
  EXPECT_EQ(syncs[1].line, 42);
  EXPECT_EQ(syncs[2].correlation_id, 200);
  EXPECT_EQ(syncs[2].sync_kind, "event");
  EXPECT_EQ(syncs[2].line, -1);
}

// The collector's capture window on cudaProfilerStart/Stop: as it does, the handler turns capture on and off.
std::vector<bool> profiler_ranges;
void followProfilerRange(bool start) {
  profiler_ranges.push_back(start);
  setGpuTracingCapture(start);
}

TEST_F(CuptiTracer, ProfilerRangeCallbacksOpenAndCloseTheCapture) {
  profiler_ranges.clear();
  GpuTracingOptions options;
  options.capture_at_start = false;
  options.profiler_range = &followProfilerRange;
  ASSERT_TRUE(start(options, &locateTrainLine));
  // Attached but recording nothing before the range: no kind, no located sync, the range callbacks on.
  EXPECT_TRUE(fake_->enabledKinds().empty());
  EXPECT_FALSE(fake_->callbackEnabled(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020));
  EXPECT_TRUE(fake_->callbackEnabled(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000));
  fake_->callApi(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 1);  // before the range: not recorded

  fake_->callApi(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, 2);
  EXPECT_EQ(fake_->enabledKinds().count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 1u);
  fake_->callApi(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 3);  // inside: recorded
  fake_->callApi(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, 4);
  EXPECT_TRUE(fake_->enabledKinds().empty());
  fake_->callApi(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 5);  // after: not recorded
  EXPECT_EQ(profiler_ranges, (std::vector<bool>{true, false}));

  auto reader = closeAndRead();
  const auto syncs = load<store::Sync>(*reader);
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0].correlation_id, 3);
  EXPECT_FALSE(fake_->callbackEnabled(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000));
}

TEST_F(CuptiTracer, WithoutAProfilerRangeItsCallbacksStayOff) {
  ASSERT_TRUE(start());
  EXPECT_FALSE(fake_->callbackEnabled(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000));
  setGpuTracingCapture(false);
  EXPECT_TRUE(fake_->enabledKinds().empty());
  setGpuTracingCapture(true);
  EXPECT_EQ(fake_->enabledKinds().count(CUPTI_ACTIVITY_KIND_RUNTIME), 1u);
}

TEST_F(CuptiTracer, AnotherCuptiUserTurnsTracingOff) {
  fake_->subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  auto started = start();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(started.error().message, "CUPTI is in use by another tool (torch.profiler, nsys): GPU tracing off");
  EXPECT_FALSE(gpuTracingStats().active);
  flushGpuTracing();
  stopGpuTracing();
  auto reader = closeAndRead();
  const auto diagnostics = load<store::Diagnostic>(*reader);
  ASSERT_EQ(diagnostics.size(), 1u) << "said once";
  EXPECT_EQ(diagnostics[0].message, started.error().message);
}

TEST_F(CuptiTracer, RefusedRequiredKindUndoesEverything) {
  fake_->enable_results[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION] = CUPTI_ERROR_NOT_COMPATIBLE;
  fake_->enable_results[CUPTI_ACTIVITY_KIND_OVERHEAD] = CUPTI_ERROR_NOT_SUPPORTED;
  auto started = start();
  ASSERT_FALSE(started);
  EXPECT_NE(started.error().message.find("GPU tracing off"), std::string::npos);
  EXPECT_TRUE(fake_->enabledKinds().empty());
  EXPECT_FALSE(fake_->subscribed());
  // The tracer can start again once the kind is accepted; only the optional kind stays off.
  fake_->enable_results.erase(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  ASSERT_TRUE(start());
  EXPECT_EQ(fake_->enabledKinds().count(CUPTI_ACTIVITY_KIND_OVERHEAD), 0u);
  auto reader = closeAndRead();
  EXPECT_NE(find(load<store::Diagnostic>(*reader), "not traced"), nullptr);
}

TEST_F(CuptiTracer, FlushAndStopDeliverTheTail) {
  ASSERT_TRUE(start());
  SyntheticBuffer first;
  first.add(kernelRecord(1, 10, 20, "flushed"));
  fake_->queueForFlush(first.bytes());
  flushGpuTracing();  // the fake completes buffers from another thread: a held lock would hang here
  EXPECT_EQ(fake_->flushCount(), 1);
  EXPECT_EQ(gpuTracingStats().records, 1u);
  SyntheticBuffer tail;
  tail.add(kernelRecord(2, 30, 40, "tail"));
  fake_->queueForFlush(tail.bytes());
  auto reader = closeAndRead();
  EXPECT_EQ(fake_->flushCount(), 2);
  EXPECT_EQ(load<store::Kernel>(*reader).size(), 2u);
}

TEST_F(CuptiTracer, CallbacksFromManyThreadsWhileFlushing) {
  ASSERT_TRUE(start({}, &locateTrainLine));
  constexpr int kThreads = 4;
  constexpr int kRounds = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int round = 0; round < kRounds; ++round) {
        const auto correlation = static_cast<std::uint32_t>(t * 1000 + round);
        fake_->callApi(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, correlation);
        SyntheticBuffer buffer;
        buffer.add(kernelRecord(correlation, 10 + round, 20 + round, "k"));
        EXPECT_TRUE(fake_->deliver(buffer.bytes()));
      }
    });
  }
  for (int i = 0; i < 10; ++i) flushGpuTracing();
  for (auto& thread : threads) thread.join();
  auto reader = closeAndRead();
  EXPECT_EQ(load<store::Kernel>(*reader).size(), static_cast<std::size_t>(kThreads * kRounds));
  EXPECT_EQ(load<store::Sync>(*reader).size(), static_cast<std::size_t>(kThreads * kRounds));
}

TEST_F(CuptiTracer, CalibratesWhenNoTimestampCallback) {
  fake_->timestamp_callback_result = CUPTI_ERROR_NOT_SUPPORTED;
  fake_->cupti_clock_offset_ns = 2'000'000'000;
  ASSERT_TRUE(start());
  const auto stats = gpuTracingStats();
  EXPECT_FALSE(stats.clock_from_callback);
  EXPECT_NEAR(static_cast<double>(stats.clock_offset_ns), 2e9, 1e6);
  SyntheticBuffer buffer;
  buffer.add(kernelRecord(1, 1'000'000, 1'000'500, "k"));
  ASSERT_TRUE(fake_->deliver(buffer.bytes()));
  auto reader = closeAndRead();
  const auto kernels = load<store::Kernel>(*reader);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].start_ns, 1'000'000 + stats.clock_offset_ns);
  EXPECT_EQ(kernels[0].end_ns - kernels[0].start_ns, 500);
}

TEST_F(CuptiTracer, ForkedChildNeverCallsCupti) {
  ASSERT_TRUE(start());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(10);  // a hang in the child fails the test instead of blocking it
    gpuTracingAtForkChild();
    flushGpuTracing();
    stopGpuTracing();
    fake_->callApi(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 5);
    const bool untouched = fake_->flushCount() == 0 && !gpuTracingStats().active && fake_->subscribed();
    _exit(untouched ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(gpuTracingStats().active) << "the parent keeps tracing";
}

}  // namespace
}  // namespace torchscope::cupti
