#include <gtest/gtest.h>

#include "torchscope/store/Classify.h"

namespace torchscope::store {
namespace {

TEST(ClassifyRecompile, GuardTextsFromTorch) {
  // Texts as torch 2.x prints them in recompile reasons.
  EXPECT_EQ(classifyRecompile("0/0: tensor 'L['x']' size mismatch at index 0. expected 3, actual 4"), "dynamic-shape");
  EXPECT_EQ(classifyRecompile("0/1: tensor 'x' stride mismatch at index 1. expected 4, actual 8"), "dynamic-shape");
  EXPECT_EQ(classifyRecompile("0/0: L['self'].param_groups[0]['lr'] == 0.0047"), "python-scalar");
  EXPECT_EQ(classifyRecompile("1/3: L['c'] == 1.5"), "python-scalar");
  EXPECT_EQ(classifyRecompile("0/0: L['n'] == -2"), "python-scalar");
  EXPECT_EQ(classifyRecompile("0/0: ___check_type_id(L['x'], 94318576)"), "type-or-identity");
  EXPECT_EQ(classifyRecompile("0/0: ___check_obj_id(L['self'].mod, 1403)"), "type-or-identity");
  EXPECT_EQ(classifyRecompile("0/0: tensor 'L['x']' dtype mismatch. expected Float, actual Half"), "type-or-identity");
  EXPECT_EQ(classifyRecompile("0/0: tensor 'L['x']' requires_grad mismatch. expected requires_grad=0"),
            "type-or-identity");
  EXPECT_EQ(classifyRecompile("0/0: len(L['xs']) == 3"), "other");
  EXPECT_EQ(classifyRecompile("0/0: G['flag'] == True"), "other");
  EXPECT_EQ(classifyRecompile(""), "other");
}

TEST(ClassifyRecompile, ShapeWinsWhenSeveralGuardsFail) {
  EXPECT_EQ(classifyRecompile("0/0: L['lr'] == 0.1\n0/0: tensor 'L['x']' size mismatch at index 0"), "dynamic-shape");
}

TEST(RecompileLimit, BothSpellingsOfTheLimit) {
  EXPECT_TRUE(isRecompileLimitHit("torch._dynamo hit config.recompile_limit (8) function: 'fn' (a.py:3)"));
  EXPECT_TRUE(isRecompileLimitHit("torch._dynamo hit config.cache_size_limit (8)"));
  EXPECT_FALSE(isRecompileLimitHit("Recompiling function fn in a.py:3"));
}

}  // namespace
}  // namespace torchscope::store
