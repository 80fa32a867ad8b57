#include <gtest/gtest.h>

#include <set>

#include "torchscope/compiler/Experiment.h"
#include "torchscope/compiler/FixCatalog.h"

namespace torchscope::compiler {
namespace {

TEST(FixCatalog, HasEverySharedFixId) {
  for (const char* id : {"dynamic-shapes", "tensor-lr", "capture-scalar-outputs", "capture-dynamic-output-shape-ops",
                         "compile-mode", "tf32", "bf16-autocast", "inference-mode", "channels-last", "pin-memory",
                         "torch-compile", "repeat-interleave-output-size", "item-accumulate-tensor", "tuple-keys-to-str",
                         "print-out-of-compiled", "sdpa", "quantize-dynamic", "cuda-graphs", "cache-compile",
                         "remove-data-dependent-branch"}) {
    EXPECT_NE(findFix(id), nullptr) << id;
  }
  std::set<std::string_view> ids;
  for (const auto& spec : fixCatalog()) EXPECT_TRUE(ids.insert(spec.id).second) << spec.id;
}

TEST(FixCatalog, ParsesListsWithArguments) {
  auto fixes = parseFixList(" tensor-lr, compile-mode:max-autotune ,tensor-lr,");
  ASSERT_TRUE(fixes.ok());
  ASSERT_EQ(fixes->size(), 2U);
  EXPECT_EQ((*fixes)[1].id, "compile-mode");
  EXPECT_EQ((*fixes)[1].arg, "max-autotune");
  EXPECT_EQ((*fixes)[1].spec(), "compile-mode:max-autotune");
  EXPECT_TRUE((*fixes)[0].has_source_form);
}

TEST(FixCatalog, RejectsUnknownAndTestOnlyIds) {
  EXPECT_FALSE(parseFixList("no-such-fix").ok());
  EXPECT_FALSE(parseFixList("test-change-results").ok());
  EXPECT_TRUE(parseFixList("test-change-results", true).ok());
}

FixOutcome measuredOutcome(double median, double low, double high, double total) {
  FixOutcome outcome;
  outcome.measured = true;
  outcome.speedup = {median, low, high};
  outcome.total_speedup = total;
  outcome.parity.checked = true;
  return outcome;
}

TEST(Decide, AcceptsSignificantGainWithParity) {
  auto outcome = measuredOutcome(1.5, 1.3, 1.7, 1.01);
  decide(outcome, 0.02);
  EXPECT_TRUE(outcome.accepted) << outcome.reason;
}

TEST(Decide, AcceptsWallTimeGainWithoutSteadyStateGain) {
  auto outcome = measuredOutcome(1.0, 0.95, 1.05, 1.3);
  decide(outcome, 0.02);
  EXPECT_TRUE(outcome.accepted) << outcome.reason;
}

TEST(Decide, RejectsSlowerAndNoGainAndBrokenParityAndFailures) {
  auto slower = measuredOutcome(0.8, 0.7, 0.9, 1.2);
  decide(slower, 0.02);
  EXPECT_FALSE(slower.accepted);
  EXPECT_NE(slower.reason.find("slower"), std::string::npos);

  auto neutral = measuredOutcome(1.0, 0.9, 1.1, 1.0);
  decide(neutral, 0.02);
  EXPECT_FALSE(neutral.accepted);
  EXPECT_NE(neutral.reason.find("no measurable gain"), std::string::npos);

  auto broken = measuredOutcome(2.0, 1.9, 2.1, 2.0);
  broken.parity.ok = false;
  broken.parity.reason = "parity: values differ";
  decide(broken, 0.02);
  EXPECT_FALSE(broken.accepted);
  EXPECT_EQ(broken.reason, "parity: values differ");

  auto failed = measuredOutcome(2.0, 1.9, 2.1, 2.0);
  failed.stats.failed_runs = 1;
  decide(failed, 0.02);
  EXPECT_FALSE(failed.accepted);
  EXPECT_NE(failed.reason.find("failed"), std::string::npos);
}

}  // namespace
}  // namespace torchscope::compiler
