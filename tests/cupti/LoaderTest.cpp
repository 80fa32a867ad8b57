// The real dlopen() loader on this machine. Without a CUDA driver it must fail with one clear
// line and leave the job alone; libcupti itself loads without a driver.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "CuptiTestSupport.h"
#include "torchscope/base/Clock.h"
#include "torchscope/cupti/ActivityDecoder.h"
#include "torchscope/cupti/CuptiApi.h"
#include "torchscope/cupti/GpuTracer.h"
#include "torchscope/store/Reader.h"

namespace torchscope::cupti {
namespace {

TEST(CuptiLoader, NoDriverFailsWithOneClearLine) {
  if (cudaDriverAvailable()) GTEST_SKIP() << "a CUDA driver is installed here";
  auto api = loadCupti();
  ASSERT_FALSE(api);
  EXPECT_EQ(api.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(api.error().message, "no CUDA driver: GPU tracing off");
}

TEST(CuptiLoader, StartWithoutDriverLeavesADiagnosticAndNothingElse) {
  if (cudaDriverAvailable()) GTEST_SKIP() << "a CUDA driver is installed here";
  testing::TempDir dir;
  auto writer = store::Writer::open(dir.file("run.db"));
  ASSERT_TRUE(writer);
  auto started = startGpuTracing(**writer, {}, nullptr);
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().message, "no CUDA driver: GPU tracing off");
  EXPECT_FALSE(gpuTracingStats().active);
  flushGpuTracing();
  stopGpuTracing();
  ASSERT_TRUE((*writer)->close());
  auto reader = store::Reader::open(dir.file("run.db"));
  ASSERT_TRUE(reader);
  auto diagnostics = (*reader)->load<store::Diagnostic>();
  ASSERT_TRUE(diagnostics);
  ASSERT_EQ(diagnostics->size(), 1u);
  EXPECT_EQ((*diagnostics)[0].source, "cupti");
  EXPECT_EQ((*diagnostics)[0].message, "no CUDA driver: GPU tracing off");
}

TEST(CuptiLoader, LibcuptiResolvesEverySymbolWithoutADriver) {
  auto api = loadCuptiLibrary(cuptiLibraryCandidates());
  if (!api) GTEST_SKIP() << "no libcupti on this machine: " << api.error().message;
  EXPECT_TRUE(std::filesystem::exists((*api)->libraryPath())) << (*api)->libraryPath();
  EXPECT_NE((*api)->resultText(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED).find("MULTIPLE"), std::string::npos);
}

TEST(CuptiLoader, RealLibcuptiWithoutDriverRefusesToStartCleanly) {
  if (cudaDriverAvailable()) GTEST_SKIP() << "a CUDA driver is installed here";
  auto api = loadCuptiLibrary(cuptiLibraryCandidates());
  if (!api) GTEST_SKIP() << "no libcupti on this machine: " << api.error().message;
  testing::TempDir dir;
  auto writer = store::Writer::open(dir.file("run.db"));
  ASSERT_TRUE(writer);
  auto started = startGpuTracingWith(std::shared_ptr<CuptiApi>(std::move(api.value())), **writer, {}, nullptr);
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(started.error().message.find("GPU tracing off"), std::string::npos) << started.error().message;
  EXPECT_FALSE(gpuTracingStats().active);
  stopGpuTracing();
}

TEST(CuptiLoader, CalibrationAgainstTheRealCuptiClock) {
  // cuptiGetTimestamp needs no driver; its clock is not CLOCK_MONOTONIC, so the offset is real work.
  auto api = loadCuptiLibrary(cuptiLibraryCandidates());
  if (!api) GTEST_SKIP() << "no libcupti on this machine: " << api.error().message;
  auto& cupti = **api;
  auto cupti_now = [&cupti] {
    std::uint64_t ns = 0;
    return cupti.timestamp(&ns) == CUPTI_SUCCESS ? static_cast<std::int64_t>(ns) : std::int64_t{0};
  };
  const auto clock = ClockAlignment::calibrate(cupti_now, [] { return base::monotonicNow(); });
  EXPECT_GE(clock.uncertaintyNs(), 0);
  EXPECT_LT(clock.uncertaintyNs(), 1'000'000);
  const base::Nanos before = base::monotonicNow();
  const base::Nanos aligned = clock.toStore(static_cast<std::uint64_t>(cupti_now()));
  const base::Nanos after = base::monotonicNow();
  EXPECT_GE(aligned, before - 1'000'000);
  EXPECT_LE(aligned, after + 1'000'000);
}

TEST(CuptiLoader, UnusableCandidatesFailCleanly) {
  auto missing = loadCuptiLibrary({"/nonexistent/libcupti.so.13"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(missing.error().message.find("GPU tracing off"), std::string::npos);
  auto not_cupti = loadCuptiLibrary({"libm.so.6"});
  ASSERT_FALSE(not_cupti);
  EXPECT_NE(not_cupti.error().message.find("lacks cuptiActivityEnable"), std::string::npos);
}

TEST(CuptiLoader, ExplicitLibraryComesFirst) {
  setenv("TORCHSCOPE_CUPTI_LIBRARY", "/opt/custom/libcupti.so", 1);
  const auto candidates = cuptiLibraryCandidates();
  unsetenv("TORCHSCOPE_CUPTI_LIBRARY");
  ASSERT_FALSE(candidates.empty());
  EXPECT_EQ(candidates.front(), "/opt/custom/libcupti.so");
}

}  // namespace
}  // namespace torchscope::cupti
