// `optimize`'s recommendation among measured variants: the fastest within tolerance, unless another variant's p50
// cannot be told apart from it and is closer to the eager outputs (then that one), or the baseline.
#include <gtest/gtest.h>

#include "torchscope/compiler/Optimize.h"

namespace torchscope::compiler {
namespace {

OptimizeVariant measured(std::string name, double p50_ms, double half_width_ms, double rel_diff,
                         bool parity_ok = true) {
  OptimizeVariant v;
  v.name = std::move(name);
  v.p50 = {p50_ms, p50_ms - half_width_ms, p50_ms + half_width_ms};
  v.max_rel_diff = rel_diff;
  v.parity_ok = parity_ok;
  return v;
}

OptimizeReport reportOf(std::vector<OptimizeVariant> variants) {
  OptimizeReport report;
  report.variants = std::move(variants);
  const double baseline_ms = report.variants.front().p50.value_ms;
  for (auto& v : report.variants) {
    const double ratio = baseline_ms / v.p50.value_ms;
    v.speedup.estimate = ratio;
    v.speedup.ci_low = ratio * 0.9;
    v.speedup.ci_high = ratio * 1.1;
  }
  return report;
}

// The MLP recommender of docs/performance.md: bf16 1 % ahead of aoti, well inside the intervals; aoti is exact.
TEST(Recommend, AnExactVariantAsFastAsTheFastestWithinTheIntervalsIsRecommended) {
  OptimizeReport report = reportOf({measured("eager (exported program)", 22.5, 5, 0), measured("aoti", 0.187, 0.02, 0),
                                    measured("bf16", 0.185, 0.02, 3.9e-3), measured("int8", 0.267, 0.02, 1.4e-2)});
  recommend(report);
  EXPECT_EQ(report.recommendation, "aoti");
  EXPECT_NE(report.recommendation_reason.find("as fast as bf16 within the intervals"), std::string::npos)
      << report.recommendation_reason;
  EXPECT_NE(report.recommendation_reason.find("closer to the eager outputs"), std::string::npos);
}

TEST(Recommend, AFasterApproximateVariantWhoseIntervalIsApartIsRecommended) {
  OptimizeReport report = reportOf(
      {measured("eager (exported program)", 10, 1, 0), measured("aoti", 4, 0.2, 0), measured("bf16", 2, 0.2, 5e-3)});
  recommend(report);
  EXPECT_EQ(report.recommendation, "bf16");
  EXPECT_EQ(report.recommendation_reason.rfind("the fastest within tolerance: ", 0), 0u)
      << report.recommendation_reason;
}

TEST(Recommend, AVariantOutsideItsToleranceIsNeverTheExactChoiceNorTheFastest) {
  OptimizeReport report = reportOf({measured("eager (exported program)", 10, 1, 0), measured("aoti", 4, 1, 0),
                                    measured("bf16", 1, 1, 0.4, /*parity_ok=*/false), measured("int8", 3.5, 1, 1e-2)});
  recommend(report);
  EXPECT_EQ(report.recommendation, "aoti");  // int8 is fastest within tolerance but overlaps aoti, which is exact
}

TEST(Recommend, TheBaselineWhenNothingIsFasterAndNoneWhenNothingIsWithinTolerance) {
  OptimizeReport slower = reportOf({measured("eager (exported program)", 1, 0.1, 0), measured("aoti", 2, 0.1, 0)});
  recommend(slower);
  EXPECT_EQ(slower.recommendation, "eager (exported program)");
  OptimizeReport failing = reportOf({measured("eager (exported program)", 1, 0.1, 0, false)});
  recommend(failing);
  EXPECT_EQ(failing.recommendation, "none");
}

TEST(Recommend, ASpeedUpWhoseIntervalHoldsOneSaysItIsNoise) {
  OptimizeReport report = reportOf({measured("eager (exported program)", 1.0, 0.3, 0), measured("aoti", 0.98, 0.3, 0)});
  report.variants[1].speedup = {1.02, 0.8, 1.3};
  recommend(report);
  EXPECT_EQ(report.recommendation, "aoti");
  EXPECT_NE(report.recommendation_reason.find("within the noise"), std::string::npos) << report.recommendation_reason;
}

}  // namespace
}  // namespace torchscope::compiler
