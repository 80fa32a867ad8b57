// Classifications of torch.compile events that belong to the trace model, shared by the live
// collector and the importers so that both store the same cause for the same text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace torchscope::store {

// The causes below as a type, in the classifier's order (an earlier one wins among one entry's guards); the text
// each is stored and reported as is recompileCauseName's.
enum class RecompileCauseKind {
  kDynamicShape,
  kDtypeDevice,
  kGlobalState,
  kTrainingFlag,
  kPythonScalar,
  kTypeOrIdentity,
  kOther
};
[[nodiscard]] std::string_view recompileCauseName(RecompileCauseKind cause);
// The cause a stored or reported name stands for; nullopt for a name that is none of them.
[[nodiscard]] std::optional<RecompileCauseKind> parseRecompileCause(std::string_view name);

// Why a frame was compiled again, from its failing guard text(s), with what exactly changed:
//   cause              guard text (torch 2.5 - 2.13)                          detail
//   "dynamic-shape"    "size mismatch at index 0", "stride mismatch",         the tensor ("x_num")
//                      ".size()[0] <= 8", "rank mismatch"
//   "dtype-device"     "dtype mismatch", "device mismatch", "dispatch key    "dtype", "device", "requires_grad"
//                      set mismatch" (CPU -> Meta), "requires_grad mismatch"
//   "global-state"     "GLOBAL_STATE changed: grad_mode", "autocast(...)",    "grad_mode", "autocast", or torch's
//                      deterministic algorithms, default device, ...          name of the state
//   "training-flag"    "L['self'].training == True"                           the module ("self._modules['d']")
//   "python-scalar"    a Python int/float/bool guarded by value               the guarded expression
//                      ("L['self'].param_groups[0]['lr'] == 0.01")            ("self.param_groups[0]['lr']")
//   "type-or-identity" "___check_type_id", "___check_obj_id", " is ",          "type", "identity", "deallocated"
//                      "... got deallocated"
//   "other"            anything else ("len(L['xs']) == 3")                    ""
// torch lists one failure per cache entry, most recently used entry first ("0/1: ..." before "0/0: ..."), and of
// each entry only the first guard that failed. The recompile's own cause is judged on the entry that could have
// served the call, the one that differs from it only by what changed:
//   1. an entry that fails on a tensor's size (the entry of the call's kind and state: a prompt of another length
//      reaching the prefill entry while the decode entries fail on the cache's type or flag) is it, unless
//      - its sizes are 0 or 1, which torch specialises even with dynamic=True (a decode step of one token is another
//        kind of call, not another size), or
//      - that entry already caused a recompile for that tensor's size, and the entry then compiled (dynamic in it)
//        now fails on something else, which the older entry shares: after `f(x3, True)`, `f(x4, True)`,
//        `f(x4, False)` fails the first entry on the size and the second on the flag, the cause. When the newer
//        entry fails on that tensor again (its layout: a stride), it is of another kind, and the size stands;
//   2. else the first entry that fails on something no earlier recompile of the same frame was for (`earlier`, in
//      the order they happened): an entry compiled for no_grad fails on the grad mode again whenever gradients are
//      back on, which says nothing new;
//   3. else the most recently used entry's.
// Among the guards of one entry (or texts without compile ids), the first class in this order wins.
struct RecompileCause {
  std::string cause;
  std::string detail;
  std::string entry;     // the cache entry whose failure it is, as torch numbers it ("0/0"); "" in texts without ids
  std::string guard;     // that failure, without the compile id
  std::string compiled;  // the entry the recompile compiled ("0/1"), as the caller gave it
};
// `compiled`: the recompile's own compile id ("0/2"), kept in the result for the recompiles that follow.
RecompileCause classifyRecompileCause(std::string_view guard_failures, const std::vector<RecompileCause>& earlier = {},
                                      std::string_view compiled = {});
// "0/2" for frame 0's third compile, as torch writes a compile id.
std::string compileIdText(std::int64_t frame_id, std::int64_t frame_compile_id);
// The cause alone.
std::string classifyRecompile(std::string_view guard_failures);

// A guarded expression as the user wrote it: "L['self'].lr" -> "self.lr", "G['step']" -> "step".
std::string guardedSource(std::string_view expression);

// True when torch says the recompile limit was hit and the frame falls back to eager.
bool isRecompileLimitHit(std::string_view message);

}  // namespace torchscope::store
