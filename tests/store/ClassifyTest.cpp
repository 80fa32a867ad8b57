#include <gtest/gtest.h>

#include "torchscope/store/Classify.h"

namespace torchscope::store {
namespace {

void expectCause(std::string_view guards, const std::string& cause, const std::string& detail) {
  const RecompileCause classified = classifyRecompileCause(guards);
  EXPECT_EQ(classified.cause, cause) << guards;
  EXPECT_EQ(classified.detail, detail) << guards;
  EXPECT_EQ(classifyRecompile(guards), cause) << guards;
}

// Texts as torch 2.13 (and 2.5, with its L['...'] spelling) writes them in recompile reasons.
TEST(ClassifyRecompile, ShapesNameTheTensor) {
  expectCause("0/0: tensor 'L['x']' size mismatch at index 0. expected 3, actual 4", "dynamic-shape", "x");
  expectCause("7/0: tensor 'args_dict[0]['transactions']' size mismatch at index 0. expected 1144, actual 1253",
              "dynamic-shape", "args_dict[0]['transactions']");
  expectCause("0/1: tensor 'x' stride mismatch at index 1. expected 4, actual 8", "dynamic-shape", "x");
  expectCause("0/1: L['x'].size()[0] <= 8", "dynamic-shape", "x");
  expectCause("0/0: tensor 'x' rank mismatch. expected 2, actual 3", "dynamic-shape", "x");
}

TEST(ClassifyRecompile, PythonScalarsNameTheGuardedExpression) {
  expectCause("10/0: self.param_groups[0]['lr'] == 0.01", "python-scalar", "self.param_groups[0]['lr']");
  expectCause("0/0: L['self'].param_groups[0]['lr'] == 0.0047", "python-scalar", "self.param_groups[0]['lr']");
  expectCause("1/3: L['c'] == 1.5", "python-scalar", "c");
  expectCause("0/0: L['n'] == -2", "python-scalar", "n");
  expectCause("7/0: s.calls == 0", "python-scalar", "s.calls");
  expectCause("0/0: G['flag'] == True", "python-scalar", "flag");
  // torch's trailing code comment, when a reader kept it.
  expectCause("8/0: scale == 0.5                       # def s(x, scale): return x * scale  # f.py:60 in s",
              "python-scalar", "scale");
}

TEST(ClassifyRecompile, TensorKindsGlobalStateAndModes) {
  expectCause("2/0: tensor 'x' dtype mismatch. expected Float, actual Double", "dtype-device", "dtype");
  expectCause("0/0: tensor 'L['x']' device mismatch. expected cpu, actual cuda:0", "dtype-device", "device");
  expectCause("3/0: tensor 'x' dispatch key set mismatch. expected DispatchKeySet(CPU, BackendSelect, "
              "ADInplaceOrView, AutogradCPU), actual DispatchKeySet(Meta, BackendSelect, ADInplaceOrView, "
              "AutogradMeta)",
              "dtype-device", "device");
  expectCause("0/0: tensor 'L['x']' requires_grad mismatch. expected requires_grad=0", "dtype-device",
              "requires_grad");
  expectCause("0/0: GLOBAL_STATE changed: grad_mode ", "global-state", "grad_mode");
  expectCause("4/0: GLOBAL_STATE changed: autocast(cpu)_enabled ", "global-state", "autocast");
  expectCause("0/0: GLOBAL_STATE changed: deterministic_algorithms ", "global-state", "deterministic_algorithms");
  expectCause("1/0: s._modules['d'].training == True", "training-flag", "s._modules['d']");
  expectCause("0/0: L['self'].training == False", "training-flag", "self");
}

TEST(ClassifyRecompile, IdentityAndTheRest) {
  expectCause("5/0: ___check_type_id(o, 93984369933136), type=<class '__main__.A'>", "type-or-identity", "type");
  expectCause("0/0: ___check_obj_id(L['self'].mod, 1403)", "type-or-identity", "identity");
  expectCause("10/0: Cache line invalidated because L['args'][0] got deallocated", "type-or-identity", "deallocated");
  expectCause("0/0: len(L['xs']) == 3", "other", "");
  expectCause("", "other", "");
}

TEST(ClassifyRecompile, TheFirstClassInOrderWinsWhenSeveralGuardsOfOneEntryFail) {
  expectCause("0/0: L['lr'] == 0.1\n0/0: tensor 'L['x']' size mismatch at index 0", "dynamic-shape", "x");
  expectCause("L['lr'] == 0.1\ntensor 'L['x']' size mismatch at index 0", "dynamic-shape", "x");
  expectCause("0/1: GLOBAL_STATE changed: grad_mode \n0/0: len(args) == 1", "global-state", "grad_mode");
}

// peft's disable_adapter() under no_grad: the entry the previous call ran (compiled for no_grad) fails on the adapter
// flag; the older entry fails on the grad mode an earlier recompile was for, which is not this one's cause.
TEST(ClassifyRecompile, TheCauseIsTheFailureOfTheMostRecentlyUsedEntry) {
  expectCause(
      "0/1: self._modules['layer']._adapters_disabled == False\nUser stack trace:\n  File \"m.py\", line 28\n"
      "0/0: GLOBAL_STATE changed: grad_mode ",
      "python-scalar", "self._modules['layer']._adapters_disabled");
  // A training step with a new batch size after validation: the training entry fails on the size.
  expectCause(
      "0/0: tensor 'args[0]' size mismatch at index 0. expected 32, actual 6\n"
      "0/2: GLOBAL_STATE changed: grad_mode \n0/1: GLOBAL_STATE changed: grad_mode ",
      "dynamic-shape", "args[0]");
  // The same without the history: the entry of the call's grad mode fails on the size alone.
  expectCause("0/1: GLOBAL_STATE changed: grad_mode \n0/0: tensor 'x' size mismatch at index 0", "dynamic-shape", "x");
}

// The entry compiled for no_grad fails on the grad mode again once gradients are back: that says nothing new when an
// earlier recompile of the frame was for the grad mode; the training flag of the next entry is the new cause.
TEST(ClassifyRecompile, AFailureAnEarlierRecompileWasForGivesWayToTheNextEntrys) {
  const std::string guards =
      "0/2: GLOBAL_STATE changed: grad_mode \n"
      "0/1: self._modules['drop'].training == True\n"
      "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6";
  // 0/0's size was the cause of 0/1, compiled dynamic in x, which now fails on its training flag: 0/0 shares it.
  const std::vector<RecompileCause> earlier = {
      classifyRecompileCause("0/0: tensor 'x' size mismatch at index 0. expected 4, actual 5", {}, "0/1"),
      classifyRecompileCause("0/1: GLOBAL_STATE changed: grad_mode \n0/0: GLOBAL_STATE changed: grad_mode ", {},
                             "0/2")};
  const RecompileCause cause = classifyRecompileCause(guards, earlier);
  EXPECT_EQ(cause.cause, "training-flag");
  EXPECT_EQ(cause.detail, "self._modules['drop']");
  EXPECT_EQ(cause.entry, "0/1");
  EXPECT_EQ(cause.guard, "self._modules['drop'].training == True");
  // Without history, the entry that fails on a size alone.
  EXPECT_EQ(classifyRecompileCause(guards).cause, "dynamic-shape");
  // Every entry fails on a known cause: the most recently used entry's.
  const RecompileCause repeated = classifyRecompileCause(
      "11/1: tensor 'x' size mismatch at index 0. expected 2, actual 3\n11/0: tensor 'x' size mismatch at index 0",
      {classifyRecompileCause("tensor 'x' size mismatch at index 0")});
  EXPECT_EQ(repeated.cause, "dynamic-shape");
}

// Each recompile of the frame classified with the ones before it, as the collector and the importer do.
// The i-th recompile of frame 0 compiles entry 0/(i+1).
std::vector<RecompileCause> classifyInOrder(const std::vector<std::string>& recompiles) {
  std::vector<RecompileCause> causes;
  for (const auto& guards : recompiles) {
    causes.push_back(classifyRecompileCause(guards, causes, compileIdText(0, std::ssize(causes) + 1)));
  }
  return causes;
}

// GPT-2's generate() with a compiled forward (torch 2.13, transformers 5.23), prompts of 5 then 8 tokens: 0/0 is the
// prefill of 5 tokens, 0/1 the first decode step, 0/2 the decode steps made dynamic in the cache's length. The
// second prompt reaches the decode entries (one fails on its single-token input, one on the cache, empty now) and
// the prefill entry, which differs from it only by the prompt's length.
TEST(ClassifyRecompile, ANewPromptLengthIsASizeOfThePrefillEntry) {
  const auto causes = classifyInOrder(
      {"0/0: tensor 'kwargs['input_ids']' size mismatch at index 1. expected 5, actual 1",
       "0/1: tensor 'kwargs['past_key_values'].layers[0].keys' size mismatch at index 2. expected 5, actual 6\n"
       "0/0: tensor 'kwargs['input_ids']' size mismatch at index 1. expected 5, actual 1",
       "0/2: tensor 'kwargs['input_ids']' size mismatch at index 1. expected 1, actual 8\n"
       "0/1: expected type of 'kwargs['past_key_values'].layers[0].keys' to be a tensor type, ' but found <class "
       "'NoneType'>\n"
       "0/0: tensor 'kwargs['input_ids']' size mismatch at index 1. expected 5, actual 8"});
  ASSERT_EQ(causes.size(), 3U);
  EXPECT_EQ(causes[1].cause, "dynamic-shape");
  EXPECT_EQ(causes[1].detail, "kwargs['past_key_values'].layers[0].keys");
  EXPECT_EQ(causes[2].cause, "dynamic-shape");
  EXPECT_EQ(causes[2].detail, "kwargs['input_ids']");
  EXPECT_EQ(causes[2].entry, "0/0");
  EXPECT_EQ(causes[2].guard, "tensor 'kwargs['input_ids']' size mismatch at index 1. expected 5, actual 8");
}

// A decoder whose cache flag switches: the decode entries fail on the flag, the prefill entry on the prompt's length.
TEST(ClassifyRecompile, AFlagOfAnotherKindOfCallGivesWayToTheSizeOfTheSameKind) {
  const auto causes = classifyInOrder({"0/0: tensor 'ids' size mismatch at index 1. expected 6, actual 1",
                                       "0/1: tensor 'cache.keys' size mismatch at index 1. expected 6, actual 7\n"
                                       "0/0: tensor 'ids' size mismatch at index 1. expected 6, actual 1",
                                       "0/2: cache.filled == True\n0/1: cache.filled == True\n"
                                       "0/0: tensor 'ids' size mismatch at index 1. expected 6, actual 9"});
  EXPECT_EQ(causes[2].cause, "dynamic-shape");
  EXPECT_EQ(causes[2].detail, "ids");
  EXPECT_EQ(causes[2].entry, "0/0");
}

// tests/analyzer/recompiles/decoder_generate.py's first token step after a prompt of 8 (after 5): the prompt's entry
// fails on the flag, the later token steps' entry (dynamic in the cache's length) on the cache's layout, a view of
// the prompt's projection, and the first token step's entry differs from the call only by the cache's length.
TEST(ClassifyRecompile, ANewerEntryOfAnotherLayoutLeavesTheOlderEntrysSize) {
  const auto causes =
      classifyInOrder({"0/0: tensor 'ids' size mismatch at index 1. expected 5, actual 1",
                       "0/1: tensor 'cache.keys[0]' size mismatch at index 1. expected 5, actual 6\n"
                       "0/0: tensor 'ids' size mismatch at index 1. expected 5, actual 1",
                       "0/2: tensor 'ids' size mismatch at index 1. expected 1, actual 8\n"
                       "0/1: expected type of 'cache.keys[0]' to be a tensor type, ' but found <class 'NoneType'>\n"
                       "0/0: tensor 'ids' size mismatch at index 1. expected 5, actual 8",
                       "0/3: cache.filled == False\n"
                       "0/2: tensor 'cache.keys[0]' stride mismatch at index 1. expected 64, actual 192\n"
                       "0/1: tensor 'cache.keys[0]' size mismatch at index 1. expected 5, actual 8\n"
                       "0/0: tensor 'ids' size mismatch at index 1. expected 5, actual 1"});
  EXPECT_EQ(causes[3].cause, "dynamic-shape");
  EXPECT_EQ(causes[3].detail, "cache.keys[0]");
  EXPECT_EQ(causes[3].entry, "0/1");
}

// f(x3, True), f(x4, True), then a flag of False: 0/0 fails on the size it already recompiled for, and 0/1, made
// dynamic in x, on the flag, which is the cause; also when the size is new to 0/0 (x5).
TEST(ClassifyRecompile, ASizeTheEntryAlreadyRecompiledForGivesWayToTheFlag) {
  for (const char* actual : {"4", "5"}) {
    const auto causes = classifyInOrder(
        {"0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4",
         std::string("0/1: flag == True\n0/0: tensor 'x' size mismatch at index 0. expected 3, actual ") + actual});
    EXPECT_EQ(causes[1].cause, "python-scalar") << actual;
    EXPECT_EQ(causes[1].detail, "flag") << actual;
  }
}

// PyG's GCNConv.forward called with x of requires_grad 0 (first layer) and 1 (second), on subgraphs of 120 and 150
// nodes: the entry for requires_grad=1 differs from the call only by the node count.
TEST(ClassifyRecompile, TheEntryOfTheSameRequiresGradFailsOnTheSize) {
  const auto causes = classifyInOrder({"0/0: tensor 'x' requires_grad mismatch. expected requires_grad=0",
                                       "0/1: tensor 'x' requires_grad mismatch. expected requires_grad=1\n"
                                       "0/0: tensor 'x' size mismatch at index 0. expected 120, actual 150",
                                       "0/2: tensor 'x' requires_grad mismatch. expected requires_grad=0\n"
                                       "0/1: tensor 'x' size mismatch at index 0. expected 120, actual 150\n"
                                       "0/0: tensor 'x' requires_grad mismatch. expected requires_grad=0"});
  EXPECT_EQ(causes[1].cause, "dynamic-shape");
  EXPECT_EQ(causes[2].cause, "dynamic-shape");
  EXPECT_EQ(causes[2].entry, "0/1");
}

TEST(GuardedSource, DropsTorchsScopeDictionaries) {
  EXPECT_EQ(guardedSource("L['self'].param_groups[0]['lr']"), "self.param_groups[0]['lr']");
  EXPECT_EQ(guardedSource("G['config'].steps"), "config.steps");
  EXPECT_EQ(guardedSource("L[\"x\"]"), "x");
  EXPECT_EQ(guardedSource("OL['x']"), "OL['x']");
}

TEST(RecompileLimit, BothSpellingsOfTheLimit) {
  EXPECT_TRUE(isRecompileLimitHit("torch._dynamo hit config.recompile_limit (8) function: 'fn' (a.py:3)"));
  EXPECT_TRUE(isRecompileLimitHit("torch._dynamo hit config.cache_size_limit (8)"));
  EXPECT_FALSE(isRecompileLimitHit("Recompiling function fn in a.py:3"));
}

}  // namespace
}  // namespace torchscope::store
