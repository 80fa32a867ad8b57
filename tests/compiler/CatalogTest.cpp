#include <gtest/gtest.h>

#include <cmath>
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

// The branch fix is a rewrite measured by the graph breaks it removes, so only a compiled job can show it.
TEST(FixCatalog, DataDependentBranchIsASourceFixForGraphBreaks) {
  auto fixes = parseFixList("remove-data-dependent-branch:model.py:41;model.py:57");
  ASSERT_TRUE(fixes.ok());
  ASSERT_EQ(fixes->size(), 1U);
  EXPECT_EQ((*fixes)[0].kind, FixKind::kSource);
  EXPECT_EQ((*fixes)[0].arg, "model.py:41;model.py:57");
  EXPECT_EQ((*fixes)[0].effect, Effect::kFewerGraphBreaks);
  EXPECT_EQ((*fixes)[0].requirement, Requirement::kCompiledJob);
}

TEST(FixCatalog, RejectsUnknownAndTestOnlyIds) {
  EXPECT_FALSE(parseFixList("no-such-fix").ok());
  EXPECT_FALSE(parseFixList("test-change-results").ok());
  EXPECT_TRUE(parseFixList("test-change-results", true).ok());
}

// quantize-dynamic's schemes are variants of one fix, each measured on its own; a fix whose argument names lines
// is still kept once.
TEST(FixCatalog, VariantsOfOneFixAreKeptApartAndUnknownSchemesRefused) {
  // torch.ao is the default scheme: named or not, one variant.
  auto schemes = parseFixList(
      "quantize-dynamic,quantize-dynamic:int8-weight-only,quantize-dynamic:int8-dynamic,"
      "quantize-dynamic:torch.ao,quantize-dynamic");
  ASSERT_TRUE(schemes.ok());
  ASSERT_EQ(schemes->size(), 3U);
  EXPECT_EQ((*schemes)[1].spec(), "quantize-dynamic:int8-weight-only");
  EXPECT_TRUE((*schemes)[0].arg_picks_variant);
  auto modes = parseFixList("compile-mode:max-autotune,compile-mode:reduce-overhead");
  ASSERT_TRUE(modes.ok());
  EXPECT_EQ(modes->size(), 2U);
  auto lines = parseFixList("sdpa:a.py:3,sdpa:b.py:5");
  ASSERT_TRUE(lines.ok());
  EXPECT_EQ(lines->size(), 1U);

  const auto unknown = parseFixList("quantize-dynamic:int4");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown quantization scheme 'int4'"), std::string::npos);
}

FixOutcome measuredOutcome(double estimate, double low, double high, int runs) {
  FixOutcome outcome;
  outcome.measured = true;
  outcome.verdict = {estimate, low, high, 0.975, 3};
  outcome.stats.runs = runs;
  outcome.parity.checked = true;
  return outcome;
}

const SequentialRule kRule{2, 3, 0.05, 0.02};

TEST(Decide, AcceptsAnIntervalAboveOneWithParity) {
  auto outcome = measuredOutcome(1.5, 1.3, 1.7, 2);
  outcome.effect = {true, true, 8, 0, "fewer shape recompiles: 8 -> 0"};
  decide(outcome, kRule, "end-to-end CPU time");
  EXPECT_TRUE(outcome.accepted) << outcome.reason;
  EXPECT_EQ(outcome.status, "accepted");
  EXPECT_NE(outcome.reason.find("end-to-end CPU time 1.500x [1.300, 1.700]"), std::string::npos) << outcome.reason;
  EXPECT_NE(outcome.reason.find("8 -> 0"), std::string::npos) << outcome.reason;
}

TEST(Decide, RejectsSlowerUndecidedBrokenParityFailuresAndNoEffect) {
  auto slower = measuredOutcome(0.8, 0.7, 0.9, 2);
  decide(slower, kRule, "end-to-end CPU time");
  EXPECT_FALSE(slower.accepted);
  EXPECT_EQ(slower.reason.rfind("slower", 0), 0U) << slower.reason;

  auto neutral = measuredOutcome(1.0, 0.9, 1.1, 3);
  decide(neutral, kRule, "end-to-end CPU time");
  EXPECT_FALSE(neutral.accepted);
  EXPECT_EQ(neutral.reason.rfind("no measurable change", 0), 0U) << neutral.reason;

  auto broken = measuredOutcome(2.0, 1.9, 2.1, 2);
  broken.parity.ok = false;
  broken.parity.reason = "parity: values differ";
  decide(broken, kRule, "end-to-end CPU time");
  EXPECT_FALSE(broken.accepted);
  EXPECT_EQ(broken.reason, "parity: values differ");

  auto failed = measuredOutcome(2.0, 1.9, 2.1, 2);
  failed.stats.failed_runs = 1;
  decide(failed, kRule, "end-to-end CPU time");
  EXPECT_FALSE(failed.accepted);
  EXPECT_NE(failed.reason.find("failed"), std::string::npos);

  auto no_effect = measuredOutcome(1.0, NAN, NAN, 1);
  no_effect.effect = {true, false, 4, 4, "fewer graph breaks: 4 -> 4"};
  decide(no_effect, kRule, "end-to-end CPU time");
  EXPECT_FALSE(no_effect.accepted);
  EXPECT_EQ(no_effect.status, "no effect");
  EXPECT_NE(no_effect.reason.find("4 -> 4"), std::string::npos) << no_effect.reason;
}

// Accepted variants of one fix cannot act together: the combination takes the faster; other fixes all go in.
TEST(CombinationMembers, TakesTheBestAcceptedVariantOfEachFixAndEveryOtherAcceptedFix) {
  std::vector<FixOutcome> fixes;
  const auto add = [&](const std::string& id, double estimate, bool accepted) {
    FixOutcome outcome = measuredOutcome(estimate, estimate - 0.1, estimate + 0.1, 3);
    outcome.id = id;
    outcome.accepted = accepted;
    fixes.push_back(outcome);
  };
  add("quantize-dynamic", 1.8, true);
  add("inference-mode", 1.1, true);
  add("quantize-dynamic:int8-weight-only", 2.4, true);
  add("quantize-dynamic:int8-dynamic", 3.0, false);  // rejected: parity
  add("sdpa:a.py:3", 1.2, true);
  std::vector<std::string> notes;
  EXPECT_EQ(combinationMembers(fixes, notes), (std::vector<std::size_t>{2, 1, 4}));
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes[0].find("the combination takes quantize-dynamic:int8-weight-only (2.400x against 1.800x)"),
            std::string::npos)
      << notes[0];

  notes.clear();
  fixes[2].accepted = false;
  EXPECT_EQ(combinationMembers(fixes, notes), (std::vector<std::size_t>{0, 1, 4}));
  EXPECT_TRUE(notes.empty());
}

}  // namespace
}  // namespace torchscope::compiler
