// Parity of an inference job's outputs (Parity.h): leaf by leaf, relative to each leaf's scale, with top-1 agreement
// for class scores, a tolerance per kind of fix, and the baseline's own run-to-run noise.
#include <gtest/gtest.h>

#include <cmath>

#include "torchscope/compiler/Parity.h"

namespace torchscope::compiler {
namespace {

// One request's output: a batch of 2 rows of 3 class scores.
RequestOutput scores(std::vector<double> values) {
  OutputLeaf leaf;
  leaf.path = "output";
  leaf.shape = {2, 3};
  double abs_max = 0;
  for (const double value : values) abs_max = std::max(abs_max, std::fabs(value));
  leaf.abs_max = abs_max;
  for (std::size_t row = 0; row < 2; ++row) {
    const auto begin = values.begin() + static_cast<std::ptrdiff_t>(row * 3);
    leaf.top1.push_back(std::max_element(begin, begin + 3) - begin);
  }
  leaf.values = std::move(values);
  return {{leaf}, ""};
}

using Runs = std::vector<std::vector<RequestOutput>>;

TEST(OutputParity, TolerancesByKindOfFix) {
  EXPECT_EQ(outputTolerance({"inference-mode"}).text, "exact");
  EXPECT_EQ(outputTolerance({"channels-last"}).relative, 1e-5);
  EXPECT_EQ(outputTolerance({"channels-last"}).min_top1, 1.0);
  EXPECT_EQ(outputTolerance({"bf16-autocast"}).relative, 5e-2);
  EXPECT_EQ(outputTolerance({"quantize-dynamic"}).min_top1, 0.9);
  EXPECT_EQ(outputTolerance({"compile-mode:max-autotune"}).relative, 1e-4);
  // A combination is judged by its loosest member.
  EXPECT_EQ(outputTolerance({"inference-mode", "bf16-autocast"}).relative, 5e-2);
}

TEST(OutputParity, ExactFixMustNotChangeABit) {
  const Runs baseline = {{scores({1, 2, 3, 3, 2, 1})}};
  const auto same = compareOutputs(baseline, {{scores({1, 2, 3, 3, 2, 1})}}, outputTolerance({"inference-mode"}));
  EXPECT_TRUE(same.ok);
  EXPECT_TRUE(same.checked);
  EXPECT_EQ(same.basis, "outputs");
  EXPECT_EQ(same.top1_agreement, 1.0);
  const auto off = compareOutputs(baseline, {{scores({1, 2, 3.000001, 3, 2, 1})}}, outputTolerance({"inference-mode"}));
  EXPECT_FALSE(off.ok);
  EXPECT_NE(off.reason.find("changes the answers"), std::string::npos);
}

TEST(OutputParity, LooserToleranceIsRelativeToTheScaleAndAsksForTheSameTopClass) {
  const Runs baseline = {{scores({1, 2, 3, 3, 2, 1})}};
  const auto close =
      compareOutputs(baseline, {{scores({1.05, 2, 3.1, 3, 2.02, 1})}}, outputTolerance({"bf16-autocast"}));
  EXPECT_TRUE(close.ok) << close.reason;
  EXPECT_NEAR(close.max_rel_diff, 0.1 / 3, 1e-12);
  EXPECT_NEAR(close.max_abs_diff, 0.1, 1e-12);
  // Within 5e-2 of the scale, but the second row's top class flips: half the rows agree.
  const auto flipped =
      compareOutputs(baseline, {{scores({1, 2, 3, 2.95, 3.0, 1})}}, outputTolerance({"bf16-autocast"}));
  EXPECT_FALSE(flipped.ok);
  EXPECT_EQ(flipped.top1_agreement, 0.5);
}

TEST(OutputParity, ADifferentStructureOrAMissingRequestBreaksParity) {
  const Runs baseline = {{scores({1, 2, 3, 3, 2, 1}), scores({1, 2, 3, 3, 2, 1})}};
  EXPECT_FALSE(compareOutputs(baseline, {{scores({1, 2, 3, 3, 2, 1})}}, outputTolerance({"tf32"})).ok);
  RequestOutput reshaped = scores({1, 2, 3, 3, 2, 1});
  reshaped.leaves[0].shape = {3, 2};
  const auto result = compareOutputs({{scores({1, 2, 3, 3, 2, 1})}}, {{reshaped}}, outputTolerance({"tf32"}));
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.reason.find("shape [3, 2]"), std::string::npos);
}

TEST(OutputParity, AnOutputThatIsNoTensorIsNotComparable) {
  const RequestOutput opaque{{}, "output is a mypkg.Prediction"};
  const auto result = compareOutputs({{opaque}}, {{opaque}}, outputTolerance({"inference-mode"}));
  EXPECT_FALSE(result.comparable);
  EXPECT_TRUE(result.ok);  // nothing says it broke: the verdict does not accept it on speed alone
  EXPECT_NE(result.reason.find("not comparable: output is a mypkg.Prediction"), std::string::npos);
}

TEST(OutputParity, ABaselineThatDiffersRunToRunIsTheYardstick) {
  // Dropout left on: the baseline's two runs differ by 0.2 of the scale, so a fix within that is kept.
  const Runs noise = {{scores({1, 2, 3, 3, 2, 1})}, {scores({1, 2.6, 3, 3, 2, 1})}};
  const Runs candidate = {{scores({1, 2.4, 3, 3, 2, 1})}};
  const auto judged = compareOutputs({noise[0]}, candidate, outputTolerance({"inference-mode"}), noise);
  EXPECT_TRUE(judged.ok) << judged.reason;
  EXPECT_NE(judged.tolerance.find("run-to-run"), std::string::npos);
  EXPECT_FALSE(compareOutputs({noise[0]}, candidate, outputTolerance({"inference-mode"})).ok);
}

// A ranker's scores (one per row, no classes) the same in both baseline runs: nothing to widen, and none said.
TEST(OutputParity, ABaselineWithoutClassScoresThatRepeatsItselfWidensNothing) {
  OutputLeaf leaf;
  leaf.path = "output";
  leaf.shape = {4};
  leaf.values = {0.5, -1.0, 2.0, 0.25};
  leaf.abs_max = 2.0;
  const Runs noise = {{{{leaf}, ""}}, {{{leaf}, ""}}};
  leaf.values[2] = 2.1;
  const auto judged = compareOutputs({noise[0]}, {{{{leaf}, ""}}}, outputTolerance({"quantize-dynamic"}), noise);
  EXPECT_TRUE(judged.ok) << judged.reason;
  EXPECT_EQ(judged.top1_agreement, -1.0);
  EXPECT_EQ(judged.tolerance.find("run-to-run"), std::string::npos) << judged.tolerance;
}

TEST(OutputParity, AJobThatCalledNoModuleIsNotChecked) {
  const auto result = compareOutputs({{}}, {{}}, outputTolerance({"inference-mode"}));
  EXPECT_TRUE(result.ok);
  EXPECT_FALSE(result.checked);
  EXPECT_NE(result.reason.find("no module"), std::string::npos);
}

TEST(OutputParity, NonFiniteValuesMustMatch) {
  const Runs baseline = {{scores({1, 2, NAN, 3, 2, 1})}};
  EXPECT_TRUE(compareOutputs(baseline, {{scores({1, 2, NAN, 3, 2, 1})}}, outputTolerance({"inference-mode"})).ok);
  EXPECT_FALSE(compareOutputs(baseline, {{scores({1, 2, 3, 3, 2, 1})}}, outputTolerance({"bf16-autocast"})).ok);
}

}  // namespace
}  // namespace torchscope::compiler
