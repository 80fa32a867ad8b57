// Decoding of every stored record kind from the installed CUPTI structs, with no GPU.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "CuptiTestSupport.h"
#include "torchscope/cupti/ActivityDecoder.h"
#include "torchscope/cupti/ApiCatalog.h"
#include "torchscope/cupti/FakeCupti.h"

namespace torchscope::cupti {
namespace {

using testing::kernelRecord;
using testing::markerRecord;
using testing::memcpyRecord;
using testing::runtimeRecord;
using testing::syncRecord;

template <class Record>
const CUpti_Activity& asActivity(const Record& record) {
  return *reinterpret_cast<const CUpti_Activity*>(&record);
}

ActivityDecoder makeDecoder(std::int64_t offset = 0, ActivityDecoder::SyncFilter filter = {},
                            DecoderOptions options = {77, false, 1 << 16}) {
  auto names = [](CUpti_CallbackDomain domain, std::uint32_t cbid) {
    FakeCupti fake;
    const char* name = nullptr;
    return fake.callbackName(domain, cbid, &name) == CUPTI_SUCCESS ? std::string(name) : std::string();
  };
  return ActivityDecoder(options, ClockAlignment(offset), names, std::move(filter));
}

TEST(CuptiDecoder, KernelKeepsEveryField) {
  auto decoder = makeDecoder(1'000);
  DecodedBatch batch;
  decoder.decode(asActivity(kernelRecord(5, 10'000, 12'500, "gemm_kernel")), batch);
  ASSERT_EQ(batch.kernels.size(), 1u);
  const auto& k = batch.kernels[0];
  EXPECT_EQ(k.pid, 77);
  EXPECT_EQ(k.device, 1);
  EXPECT_EQ(k.context, 7);
  EXPECT_EQ(k.stream, 13);
  EXPECT_EQ(k.start_ns, 11'000);
  EXPECT_EQ(k.end_ns, 13'500);
  EXPECT_EQ(k.name, "gemm_kernel");
  EXPECT_EQ(k.correlation_id, 5);
  EXPECT_EQ(k.grid_x, 64);
  EXPECT_EQ(k.grid_y, 2);
  EXPECT_EQ(k.block_x, 256);
  EXPECT_EQ(k.registers_per_thread, 32);
  EXPECT_EQ(k.static_shared_bytes, 1024);
  EXPECT_EQ(k.dynamic_shared_bytes, 2048);
}

TEST(CuptiDecoder, KernelWithoutNameIsEmptyNotACrash) {
  auto decoder = makeDecoder();
  DecodedBatch batch;
  auto record = kernelRecord(1, 1, 2, nullptr);
  record.kind = CUPTI_ACTIVITY_KIND_KERNEL;
  decoder.decode(asActivity(record), batch);
  ASSERT_EQ(batch.kernels.size(), 1u);
  EXPECT_EQ(batch.kernels[0].name, "");
}

TEST(CuptiDecoder, MemcpyDirectionAndPageableMemory) {
  auto decoder = makeDecoder();
  DecodedBatch batch;
  decoder.decode(asActivity(memcpyRecord(1, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                                         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, true)),
                 batch);
  decoder.decode(asActivity(memcpyRecord(2, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                                         CUPTI_ACTIVITY_MEMORY_KIND_PINNED, false)),
                 batch);
  decoder.decode(asActivity(memcpyRecord(3, CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, CUPTI_ACTIVITY_MEMORY_KIND_ARRAY,
                                         CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, false)),
                 batch);
  decoder.decode(asActivity(memcpyRecord(4, 200, 99, 42, false)), batch);
  ASSERT_EQ(batch.memcpys.size(), 4u);
  const auto& pageable = batch.memcpys[0];
  EXPECT_EQ(pageable.copy_kind, "HtoD");
  EXPECT_EQ(pageable.src_kind, "pageable");
  EXPECT_EQ(pageable.dst_kind, "device");
  EXPECT_TRUE(pageable.pageable);
  EXPECT_TRUE(pageable.async);
  EXPECT_EQ(pageable.bytes, 4096);
  EXPECT_EQ(pageable.stream, 7);
  EXPECT_EQ(pageable.correlation_id, 1);
  const auto& pinned = batch.memcpys[1];
  EXPECT_EQ(pinned.copy_kind, "DtoH");
  EXPECT_EQ(pinned.dst_kind, "pinned");
  EXPECT_FALSE(pinned.pageable);
  EXPECT_FALSE(pinned.async);
  EXPECT_EQ(batch.memcpys[2].copy_kind, "DtoD");
  EXPECT_EQ(batch.memcpys[2].dst_kind, "managed");
  EXPECT_EQ(batch.memcpys[3].copy_kind, "unknown");
  EXPECT_EQ(batch.memcpys[3].src_kind, "unknown");
}

TEST(CuptiDecoder, PeerMemcpy) {
  CUpti_ActivityMemcpyPtoP4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  m.srcKind = m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1 << 20;
  m.start = 10;
  m.end = 20;
  m.srcDeviceId = 2;
  m.dstDeviceId = 3;
  m.streamId = 5;
  m.correlationId = 9;
  auto decoder = makeDecoder();
  DecodedBatch batch;
  decoder.decode(asActivity(m), batch);
  ASSERT_EQ(batch.memcpys.size(), 1u);
  EXPECT_EQ(batch.memcpys[0].copy_kind, "PtoP");
  EXPECT_EQ(batch.memcpys[0].device, 2);
  EXPECT_EQ(batch.memcpys[0].bytes, 1 << 20);
}

TEST(CuptiDecoder, Memset) {
  CUpti_ActivityMemset4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.value = 0xff;
  m.bytes = 512;
  m.start = 100;
  m.end = 150;
  m.deviceId = 0;
  m.streamId = 0xffffffff;
  m.correlationId = 11;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  auto decoder = makeDecoder();
  DecodedBatch batch;
  decoder.decode(asActivity(m), batch);
  ASSERT_EQ(batch.memsets.size(), 1u);
  EXPECT_EQ(batch.memsets[0].value, 0xff);
  EXPECT_EQ(batch.memsets[0].bytes, 512);
  EXPECT_EQ(batch.memsets[0].memory_kind, "device");
  EXPECT_EQ(batch.memsets[0].stream, -1);
  EXPECT_EQ(batch.memsets[0].correlation_id, 11);
}

TEST(CuptiDecoder, MemoryAllocationAndReleaseRecords) {
  CUpti_ActivityMemory4 alloc{};
  alloc.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  alloc.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  alloc.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  alloc.correlationId = 21;
  alloc.address = 0x7f0000000000;
  alloc.bytes = std::uint64_t{2} << 20;
  alloc.timestamp = 1000;
  alloc.deviceId = 1;
  alloc.streamId = 7;
  CUpti_ActivityMemory4 release = alloc;
  release.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  release.correlationId = 22;
  release.timestamp = 2000;
  release.streamId = 0xffffffff;
  CUpti_ActivityMemory4 odd = alloc;
  odd.memoryOperationType = static_cast<CUpti_ActivityMemoryOperationType>(77);
  odd.memoryKind = static_cast<CUpti_ActivityMemoryKind>(99);
  odd.bytes = ~std::uint64_t{0};
  auto decoder = makeDecoder(/*offset=*/500);
  DecodedBatch batch;
  decoder.decode(asActivity(alloc), batch);
  decoder.decode(asActivity(release), batch);
  decoder.decode(asActivity(odd), batch);
  ASSERT_EQ(batch.memory_events.size(), 3u);
  const auto& a = batch.memory_events[0];
  EXPECT_EQ(a.pid, 77);
  EXPECT_EQ(a.device, 1);
  EXPECT_EQ(a.ts_ns, 1500);
  EXPECT_EQ(a.operation, "alloc");
  EXPECT_EQ(a.bytes, 2 << 20);
  EXPECT_EQ(a.address, 0x7f0000000000);
  EXPECT_EQ(a.memory_kind, "device");
  EXPECT_EQ(a.stream, 7);
  EXPECT_EQ(a.correlation_id, 21);
  EXPECT_EQ(a.total_allocated, -1);
  EXPECT_EQ(batch.memory_events[1].operation, "free");
  EXPECT_EQ(batch.memory_events[1].stream, -1);
  EXPECT_EQ(batch.memory_events[2].operation, "unknown");
  EXPECT_EQ(batch.memory_events[2].memory_kind, "unknown");
  EXPECT_EQ(batch.memory_events[2].bytes, std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(batch.size(), 3u);
}

TEST(CuptiDecoder, MemoryPoolRecords) {
  CUpti_ActivityMemoryPool3 pool{};
  pool.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  pool.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
  pool.deviceId = 0;
  pool.address = 0x1000;
  pool.size = 64 << 20;
  pool.timestamp = 300;
  pool.correlationId = 5;
  pool.isManagedPool = 1;
  auto decoder = makeDecoder();
  DecodedBatch batch;
  decoder.decode(asActivity(pool), batch);
  pool.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
  pool.isManagedPool = 0;
  decoder.decode(asActivity(pool), batch);
  ASSERT_EQ(batch.memory_events.size(), 2u);
  EXPECT_EQ(batch.memory_events[0].operation, "pool-trim");
  EXPECT_EQ(batch.memory_events[0].memory_kind, "managed");
  EXPECT_EQ(batch.memory_events[0].bytes, 64 << 20);
  EXPECT_EQ(batch.memory_events[0].ts_ns, 300);
  EXPECT_EQ(batch.memory_events[1].operation, "pool-create");
  EXPECT_EQ(batch.memory_events[1].memory_kind, "device");
  EXPECT_EQ(decoder.unknownRecords(), 0u);
}

TEST(CuptiDecoder, SynchronizationKinds) {
  auto decoder = makeDecoder();
  DecodedBatch batch;
  decoder.decode(asActivity(syncRecord(1, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE)), batch);
  decoder.decode(asActivity(syncRecord(2, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE)), batch);
  decoder.decode(asActivity(syncRecord(3, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE)), batch);
  decoder.decode(asActivity(syncRecord(4, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT)), batch);
  ASSERT_EQ(batch.syncs.size(), 4u);
  EXPECT_EQ(batch.syncs[0].sync_kind, "stream");
  EXPECT_EQ(batch.syncs[0].op, "cudaStreamSynchronize");
  EXPECT_EQ(batch.syncs[0].origin, "cupti");
  EXPECT_EQ(batch.syncs[0].start_ns, 7000);
  EXPECT_EQ(batch.syncs[0].end_ns, 9000);
  EXPECT_EQ(batch.syncs[0].stream, 3);
  EXPECT_EQ(batch.syncs[1].sync_kind, "context");
  EXPECT_EQ(batch.syncs[1].op, "cudaDeviceSynchronize");
  EXPECT_EQ(batch.syncs[2].sync_kind, "event");
  EXPECT_EQ(batch.syncs[3].sync_kind, "stream-wait-event");
}

TEST(CuptiDecoder, SynchronizationAlreadyRecordedByCallbackIsSkipped) {
  auto decoder = makeDecoder(0, [](std::uint32_t correlation) { return correlation == 2; });
  DecodedBatch batch;
  decoder.decode(asActivity(syncRecord(1, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE)), batch);
  decoder.decode(asActivity(syncRecord(2, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE)), batch);
  ASSERT_EQ(batch.syncs.size(), 1u);
  EXPECT_EQ(batch.syncs[0].correlation_id, 1);
}

TEST(CuptiDecoder, RuntimeApiNamesAndNoise) {
  auto decoder = makeDecoder();
  DecodedBatch batch;
  decoder.decode(asActivity(runtimeRecord(5, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 100, 200)), batch);
  decoder.decode(asActivity(runtimeRecord(6, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 300, 310)), batch);
  decoder.decode(asActivity(runtimeRecord(7, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, 400, 410)), batch);
  ASSERT_EQ(batch.api_calls.size(), 2u);
  const auto& launch = batch.api_calls[0];
  EXPECT_EQ(launch.name, "cudaLaunchKernel");
  EXPECT_EQ(launch.api, "runtime");
  EXPECT_EQ(launch.pid, 4242);
  EXPECT_EQ(launch.tid, 4343);
  EXPECT_EQ(launch.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  EXPECT_EQ(launch.correlation_id, 5);
  EXPECT_EQ(batch.api_calls[1].name, "cbid_" + std::to_string(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020));
}

// Triton launches its kernels with cuLaunchKernel: those rows are kept always, other driver calls only when asked.
TEST(CuptiDecoder, DriverLaunchesAlwaysOtherDriverCallsOnlyWhenAsked) {
  auto driverRecord = [](std::uint32_t correlation, CUpti_CallbackId cbid) {
    auto record = runtimeRecord(correlation, cbid, 1, 2);
    record.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    return record;
  };
  const auto launch = driverRecord(5, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  const auto launch_ex = driverRecord(6, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx);
  const auto alloc = driverRecord(7, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2);
  const auto noisy = driverRecord(8, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent);

  auto without = makeDecoder();
  DecodedBatch launches;
  for (const auto& record : {launch, launch_ex, alloc, noisy}) without.decode(asActivity(record), launches);
  ASSERT_EQ(launches.api_calls.size(), 2u);
  EXPECT_EQ(launches.api_calls[0].api, "driver");
  EXPECT_EQ(launches.api_calls[0].correlation_id, 5);
  EXPECT_EQ(launches.api_calls[1].cbid, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx);

  auto with = makeDecoder(0, {}, DecoderOptions{77, true, 16});
  DecodedBatch all;
  for (const auto& record : {launch, launch_ex, alloc, noisy}) with.decode(asActivity(record), all);
  ASSERT_EQ(all.api_calls.size(), 3u) << "noise stays out even when every driver call is asked for";
  EXPECT_EQ(all.api_calls[2].correlation_id, 7);
}

TEST(CuptiDecoder, NvtxMarksAndRanges) {
  auto decoder = makeDecoder(0);
  DecodedBatch batch;
  decoder.decode(asActivity(markerRecord(1, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 50, "checkpoint", "app")),
                 batch);
  decoder.decode(asActivity(markerRecord(2, CUPTI_ACTIVITY_FLAG_MARKER_START, 100, "forward")), batch);
  decoder.decode(asActivity(markerRecord(2, CUPTI_ACTIVITY_FLAG_MARKER_END, 180, nullptr)), batch);
  ASSERT_EQ(batch.nvtx.size(), 2u);
  EXPECT_EQ(batch.nvtx[0].kind, "mark");
  EXPECT_EQ(batch.nvtx[0].name, "checkpoint");
  EXPECT_EQ(batch.nvtx[0].domain, "app");
  EXPECT_EQ(batch.nvtx[0].start_ns, batch.nvtx[0].end_ns);
  EXPECT_EQ(batch.nvtx[0].pid, 4242);
  EXPECT_EQ(batch.nvtx[0].tid, 4343);
  EXPECT_EQ(batch.nvtx[1].kind, "range");
  EXPECT_EQ(batch.nvtx[1].name, "forward");
  EXPECT_EQ(batch.nvtx[1].start_ns, 100);
  EXPECT_EQ(batch.nvtx[1].end_ns, 180);
}

TEST(CuptiDecoder, NvtxRangeEndBeforeStartFromOutOfOrderBuffers) {
  auto decoder = makeDecoder(0);
  DecodedBatch batch;
  decoder.decode(asActivity(markerRecord(9, CUPTI_ACTIVITY_FLAG_MARKER_END, 900, nullptr)), batch);
  EXPECT_TRUE(batch.nvtx.empty());
  decoder.decode(asActivity(markerRecord(9, CUPTI_ACTIVITY_FLAG_MARKER_START, 400, "backward")), batch);
  ASSERT_EQ(batch.nvtx.size(), 1u);
  EXPECT_EQ(batch.nvtx[0].name, "backward");
  EXPECT_EQ(batch.nvtx[0].start_ns, 400);
  EXPECT_EQ(batch.nvtx[0].end_ns, 900);
}

TEST(CuptiDecoder, UnclosedRangesAndCapBecomeDiagnostics) {
  auto decoder = makeDecoder(0, {}, DecoderOptions{77, false, 2});
  DecodedBatch batch;
  for (std::uint32_t id = 1; id <= 3; ++id) {
    decoder.decode(asActivity(markerRecord(id, CUPTI_ACTIVITY_FLAG_MARKER_START, 10 * id, "step")), batch);
  }
  decoder.decode(asActivity(markerRecord(50, CUPTI_ACTIVITY_FLAG_MARKER_END, 10, nullptr)), batch);
  decoder.finish(batch);
  ASSERT_EQ(batch.diagnostics.size(), 2u);
  EXPECT_EQ(batch.diagnostics[0].message, "NVTX ranges still open when tracing stopped");
  EXPECT_EQ(batch.diagnostics[0].count, 2);
  EXPECT_EQ(batch.diagnostics[1].message, "NVTX ranges dropped: too many open at once");
  EXPECT_EQ(batch.diagnostics[1].count, 2);
}

TEST(CuptiDecoder, OverheadTotalsAndUnknownKinds) {
  CUpti_ActivityOverhead3 o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.start = 1'000;
  o.end = 4'000;
  CUpti_Activity unknown{};
  unknown.kind = CUPTI_ACTIVITY_KIND_PCIE;
  auto decoder = makeDecoder();
  DecodedBatch batch;
  decoder.decode(asActivity(o), batch);
  decoder.decode(asActivity(o), batch);
  decoder.decode(unknown, batch);
  EXPECT_EQ(decoder.decodedRecords(), 2u);
  EXPECT_EQ(decoder.unknownRecords(), 1u);
  decoder.finish(batch);
  ASSERT_EQ(batch.diagnostics.size(), 2u);
  EXPECT_EQ(batch.diagnostics[0].message, "CUPTI overhead (buffer flush): 6 us in total");
  EXPECT_EQ(batch.diagnostics[0].count, 2);
  EXPECT_EQ(batch.diagnostics[1].message, "CUPTI records of kinds not stored");
}

TEST(CuptiDecoder, Device) {
  CUpti_ActivityDevice5 d{};
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.computeCapabilityMajor = 9;
  d.computeCapabilityMinor = 0;
  d.globalMemorySize = 85'000'000'000ull;
  d.numMultiprocessors = 132;
  d.l2CacheSize = 50 << 20;
  auto decoder = makeDecoder();
  DecodedBatch batch;
  decoder.decode(asActivity(d), batch);
  ASSERT_EQ(batch.devices.size(), 1u);
  EXPECT_EQ(batch.devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(batch.devices[0].compute_major, 9);
  EXPECT_EQ(batch.devices[0].total_memory_bytes, 85'000'000'000ll);
  EXPECT_EQ(batch.devices[0].multiprocessor_count, 132);
  EXPECT_EQ(nlohmann::json::parse(batch.devices[0].properties)["l2_cache_bytes"], 50 << 20);
}

TEST(CuptiClock, IdentityAndLimits) {
  const auto clock = ClockAlignment::identity();
  EXPECT_EQ(clock.toStore(123), 123);
  EXPECT_EQ(clock.toStore(0), -1);
  EXPECT_EQ(clock.toStore(~0ull), -1);
  EXPECT_EQ(ClockAlignment(-500).toStore(100), -1);
  EXPECT_EQ(ClockAlignment(-500).toStore(1500), 1000);
}

TEST(CuptiClock, CalibrationPicksTheTightestBracket) {
  // CUPTI's clock runs 5 s behind; the monotonic reads around it are 100 ns apart except one
  // sample where the thread was preempted for 1 ms.
  std::int64_t now = 1'000'000'000;
  int reads = 0;
  auto monotonic = [&] {
    now += (++reads == 4) ? 1'000'000 : 100;
    return now;
  };
  auto cupti = [&] { return now + 50 - 5'000'000'000; };
  const auto clock = ClockAlignment::calibrate(cupti, monotonic, 8);
  EXPECT_EQ(clock.offsetNs(), 5'000'000'000);
  EXPECT_EQ(clock.uncertaintyNs(), 50);
  EXPECT_EQ(clock.toStore(1'000), 5'000'001'000);
}

TEST(CuptiCatalog, PlainNamesAndBlockingCalls) {
  EXPECT_EQ(plainApiName("cudaStreamSynchronize_ptsz_v7000"), "cudaStreamSynchronize");
  EXPECT_EQ(plainApiName("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(plainApiName("cudaMemcpy"), "cudaMemcpy");
  EXPECT_EQ(plainApiName("cuMemAlloc_v2"), "cuMemAlloc");
  EXPECT_EQ(plainApiName("_v"), "_v");
  ASSERT_TRUE(blockingRuntimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020));
  EXPECT_STREQ(blockingRuntimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020)->sync_kind, "memcpy");
  EXPECT_FALSE(blockingRuntimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
  EXPECT_TRUE(isNoisyRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
}

TEST(CuptiSyntheticBuffer, WalkStopsAtTruncatedRecord) {
  SyntheticBuffer buffer;
  buffer.add(kernelRecord(1, 1, 2, "a")).add(memcpyRecord(2, 1, 1, 3, false));
  auto bytes = buffer.bytes();
  bytes.resize(bytes.size() - 8);  // cut into the memcpy record
  CUpti_Activity* record = nullptr;
  ASSERT_EQ(nextSyntheticRecord(bytes.data(), bytes.size(), &record), CUPTI_SUCCESS);
  EXPECT_EQ(record->kind, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  EXPECT_EQ(nextSyntheticRecord(bytes.data(), bytes.size(), &record), CUPTI_ERROR_MAX_LIMIT_REACHED);
}

}  // namespace
}  // namespace torchscope::cupti
