#include <gtest/gtest.h>

#include "torchscope/compiler/Parity.h"

namespace torchscope::compiler {
namespace {

TEST(Parity, ExtractsLossValuesInOrder) {
  const std::string out = "epoch 0 loss=0.5\nstep 1 Loss: 1e-3\nval_loss=9\ntrain loss 0.25 acc 0.9 seconds=3\nno number here\n";
  auto values = extractParityValues(out, kDefaultParityPattern);
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*values, (std::vector<double>{0.5, 1e-3, 9, 0.25}));
}

TEST(Parity, CustomPatternAndBadPattern) {
  auto values = extractParityValues("acc=0.75 acc=0.8", R"(acc=([0-9.]+))");
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(values->size(), 2U);
  EXPECT_FALSE(extractParityValues("x", "(").ok());
}

TEST(Parity, WithinToleranceIsOk) {
  const auto result = compareParity({{1.0, 2.0}, {1.0, 2.0}}, {{1.0000001, 2.0}, {1.0, 2.0000002}}, 1e-6);
  EXPECT_TRUE(result.ok);
  EXPECT_TRUE(result.checked);
  EXPECT_GT(result.max_rel_diff, 0);
}

TEST(Parity, ChangedResultsBreakParity) {
  const auto result = compareParity({{1.0, 0.5}}, {{1.0, 0.7}}, 1e-3);
  EXPECT_FALSE(result.ok);
  EXPECT_NEAR(result.max_rel_diff, 0.2 / 0.7, 1e-9);
  EXPECT_NE(result.reason.find("parity"), std::string::npos);
}

TEST(Parity, DifferentLengthsBreakParity) {
  EXPECT_FALSE(compareParity({{1.0, 2.0}}, {{1.0}}, 1.0).ok);
}

TEST(Parity, NoBaselineValuesIsNotChecked) {
  const auto result = compareParity({{}, {}}, {{1.0}, {}}, 1e-3);
  EXPECT_TRUE(result.ok);
  EXPECT_FALSE(result.checked);
  EXPECT_FALSE(result.reason.empty());
}

}  // namespace
}  // namespace torchscope::compiler
