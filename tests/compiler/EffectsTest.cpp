// Which fixes can act on a run, and whether their effect shows in the first run: the checks that
// keep `torchscope fix` from spending runs on fixes that cannot help.
#include <gtest/gtest.h>

#include "torchscope/compiler/Effects.h"

namespace torchscope::compiler {
namespace {

FixRequest request(const std::string& id) {
  auto parsed = parseFixList(id);
  EXPECT_TRUE(parsed.ok()) << id;
  return parsed->front();
}

// The RDL sample as written: compiled, 8 shape and 1 lr recompiles, graph breaks, no device.
RunMeasurement rdlProfile() {
  RunMeasurement run;
  run.compiles = 21;
  run.recompiles = 9;
  run.recompiles_by_cause = {{"dynamic-shape", 8}, {"python-scalar", 1}};
  run.graph_breaks = 5;
  run.syncs = 0;
  run.compile_time_s = 90;
  return run;
}

TEST(Effects, FixesThatCannotActAreNotRun) {
  const RunMeasurement profile = rdlProfile();
  EXPECT_EQ(whyCannotAct(request("dynamic-shapes"), profile, false), "");
  EXPECT_EQ(whyCannotAct(request("tensor-lr"), profile, false), "");
  EXPECT_EQ(whyCannotAct(request("capture-dynamic-output-shape-ops"), profile, false), "");
  // Every run starts from a cache without the job's graphs: a cache has nothing to reuse.
  EXPECT_NE(whyCannotAct(request("cache-compile"), profile, false).find("none of the job's graphs"), std::string::npos);
  EXPECT_EQ(whyCannotAct(request("cache-compile"), profile, true), "");
  EXPECT_NE(whyCannotAct(request("tf32"), profile, false).find("CUDA"), std::string::npos);
  EXPECT_NE(whyCannotAct(request("item-accumulate-tensor"), profile, false).find("no host-device sync"), std::string::npos);
  EXPECT_NE(whyCannotAct(request("torch-compile"), profile, false).find("already compiles"), std::string::npos);

  RunMeasurement eager;
  eager.syncs = -1;  // no collector: unknown, so the sync fix may act
  EXPECT_NE(whyCannotAct(request("dynamic-shapes"), eager, false).find("compiles nothing"), std::string::npos);
  EXPECT_EQ(whyCannotAct(request("torch-compile"), eager, false), "");
  EXPECT_EQ(whyCannotAct(request("item-accumulate-tensor"), eager, false), "");

  RunMeasurement no_scalar_recompiles = profile;
  no_scalar_recompiles.recompiles_by_cause = {{"dynamic-shape", 9}};
  EXPECT_NE(whyCannotAct(request("tensor-lr"), no_scalar_recompiles, false).find("nothing for it to remove"),
            std::string::npos);
}

TEST(Effects, EachFixMustLowerItsOwnCount) {
  const RunMeasurement baseline = rdlProfile();
  RunMeasurement dynamic = baseline;
  dynamic.recompiles_by_cause = {{"python-scalar", 1}};
  const EffectCheck shapes = checkEffect(request("dynamic-shapes"), baseline, dynamic, 0.02);
  EXPECT_TRUE(shapes.checkable);
  EXPECT_TRUE(shapes.shown);
  EXPECT_EQ(shapes.text, "fewer shape recompiles: 8 -> 0");
  // dynamic-shapes left the lr recompile: tensor-lr's effect did not show in that run.
  EXPECT_FALSE(checkEffect(request("tensor-lr"), baseline, dynamic, 0.02).shown);

  RunMeasurement same_breaks = baseline;
  const EffectCheck breaks = checkEffect(request("capture-dynamic-output-shape-ops"), baseline, same_breaks, 0.02);
  EXPECT_TRUE(breaks.checkable);
  EXPECT_FALSE(breaks.shown);

  const EffectCheck step = checkEffect(request("inference-mode"), baseline, same_breaks, 0.02);
  EXPECT_FALSE(step.checkable);  // a faster step shows only in the timing

  RunMeasurement unknown_syncs = baseline;
  unknown_syncs.syncs = -1;
  EXPECT_FALSE(checkEffect(request("item-accumulate-tensor"), baseline, unknown_syncs, 0.02).checkable);
}

TEST(Effects, WithoutCausesAllRecompilesCount) {
  RunMeasurement before;
  before.compiles = 4;
  before.recompiles = 3;  // the launcher alone: no causes
  RunMeasurement after = before;
  after.recompiles = 1;
  EXPECT_TRUE(checkEffect(request("dynamic-shapes"), before, after, 0.02).shown);
  EXPECT_TRUE(checkEffect(request("tensor-lr"), before, after, 0.02).shown);
}

}  // namespace
}  // namespace torchscope::compiler
