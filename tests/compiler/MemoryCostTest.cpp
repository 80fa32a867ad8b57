// What a fix costs in memory: the figure compared (GPU reserved, else host RSS), the rejection of a
// faster fix above --max-memory-increase, and the fields of the JSON report.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "torchscope/compiler/Experiment.h"
#include "torchscope/compiler/Report.h"

namespace torchscope::compiler {
namespace {

constexpr std::int64_t kMiB = 1 << 20;

VariantStats withPeaks(std::int64_t rss, std::int64_t gpu_reserved = -1) {
  VariantStats stats;
  stats.peak_rss_bytes = rss;
  stats.gpu_peak_reserved_bytes = gpu_reserved;
  stats.gpu_peak_allocated_bytes = gpu_reserved >= 0 ? gpu_reserved / 2 : -1;
  return stats;
}

FixOutcome acceptedFix(const VariantStats& baseline, const VariantStats& candidate) {
  FixOutcome fix;
  fix.id = "compile-mode:reduce-overhead";
  fix.kind = "runtime";
  fix.measured = true;
  fix.accepted = true;
  fix.status = "accepted";
  fix.reason = "faster: end-to-end CPU time 1.200x [1.100, 1.300]";
  fix.speedup = {1.4, 1.3, 1.5};
  fix.total_speedup = 1.2;
  fix.stats = candidate;
  fix.memory = memoryChange(baseline, candidate);
  return fix;
}

TEST(MemoryCost, GpuReservedMemoryDecidesWhenBothRunsHaveIt) {
  const MemoryChange change = memoryChange(withPeaks(1000 * kMiB, 8000 * kMiB), withPeaks(900 * kMiB, 12000 * kMiB));
  EXPECT_EQ(change.basis, "gpu_reserved");
  EXPECT_DOUBLE_EQ(change.increase, 0.5);
}

TEST(MemoryCost, HostRssDecidesOnTheCpu) {
  const MemoryChange change = memoryChange(withPeaks(1000 * kMiB), withPeaks(900 * kMiB));
  EXPECT_EQ(change.basis, "host_rss");
  EXPECT_DOUBLE_EQ(change.increase, -0.1);
  EXPECT_FALSE(memoryChange(withPeaks(-1), withPeaks(-1)).known());
}

TEST(MemoryCost, AFasterFixAboveTheLimitIsRejectedWithTheReason) {
  FixOutcome fix = acceptedFix(withPeaks(1000 * kMiB, 8000 * kMiB), withPeaks(1000 * kMiB, 12000 * kMiB));
  limitMemory(fix, 0.25);
  EXPECT_FALSE(fix.accepted);
  EXPECT_EQ(fix.status, "rejected");
  EXPECT_NE(fix.reason.find("too costly in memory"), std::string::npos) << fix.reason;
  EXPECT_NE(fix.reason.find("GPU reserved memory grows +50.0 %"), std::string::npos) << fix.reason;
  EXPECT_NE(fix.reason.find("8000.0 -> 12000.0 MiB"), std::string::npos) << fix.reason;
}

TEST(MemoryCost, AFixWithinTheLimitOrSavingMemoryStaysAccepted) {
  FixOutcome within = acceptedFix(withPeaks(1000 * kMiB), withPeaks(1200 * kMiB));
  limitMemory(within, 0.25);
  EXPECT_TRUE(within.accepted);
  EXPECT_EQ(within.status, "accepted");
  FixOutcome saving = acceptedFix(withPeaks(1000 * kMiB), withPeaks(500 * kMiB));
  limitMemory(saving, 0.0);
  EXPECT_TRUE(saving.accepted);
}

TEST(MemoryCost, TheJsonReportHasEveryVariantsMemoryAndItsChange) {
  FixReport report;
  report.command = "python train.py";
  report.repetitions = 3;
  report.baseline = withPeaks(1000 * kMiB);
  report.fixes.push_back(acceptedFix(report.baseline, withPeaks(1100 * kMiB)));
  FixOutcome skipped;
  skipped.id = "sdpa";
  skipped.kind = "advice";
  report.fixes.push_back(skipped);
  const auto json = reportJson(report);
  EXPECT_EQ(json["baseline"]["memory"]["peak_rss_bytes"], 1000 * kMiB);
  EXPECT_TRUE(json["baseline"]["memory"]["gpu_peak_reserved_bytes"].is_null());
  const auto& memory = json["fixes"][0]["memory"];
  EXPECT_EQ(memory["peak_rss_bytes"], 1100 * kMiB);
  EXPECT_EQ(memory["basis"], "host_rss");
  EXPECT_NEAR(memory["increase"].get<double>(), 0.1, 1e-12);
  EXPECT_EQ(memory["delta_bytes"], 100 * kMiB);
  EXPECT_TRUE(json["fixes"][1]["memory"].is_null());
  const std::string text = renderText(report);
  EXPECT_NE(text.find("baseline memory: peak RSS 1000.0 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("memory peak RSS 1100.0 MiB (+10.0 % against the baseline)"), std::string::npos) << text;
  EXPECT_NE(renderMarkdown(report).find("| +10.0 % |"), std::string::npos);
}

}  // namespace
}  // namespace torchscope::compiler
