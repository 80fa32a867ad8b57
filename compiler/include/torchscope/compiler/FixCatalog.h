// The catalogue of fixes `torchscope fix` can apply, keyed by the fix ids the analyzer emits.
//
// Error contract: lookups return nullptr / an Error for unknown ids; nothing throws.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "torchscope/base/Result.h"

namespace torchscope::compiler {

enum class FixKind {
  kRuntime,  // a patch applied at interpreter start (torchscope_compiler.runtime), no file edited
  kSource,   // a rewrite of the user's files (torchscope_compiler.rewrite), shown as a diff
  kAdvice,   // no automatic form: reported, never measured
};

// What a fix must change in the store of its first run. A fix whose effect does not show there is
// reported "no effect" and not run again; one whose target is already absent is not run at all.
enum class Effect {
  kFasterStep,              // nothing countable: only the timing says whether it helped
  kFewerShapeRecompiles,    // recompiles caused by changing tensor sizes
  kFewerScalarRecompiles,   // recompiles caused by a changing Python number (a float lr)
  kFewerGraphBreaks,
  kFewerSyncs,              // host-device syncs
  kFewerGraphBreaksOrSyncs,
  kCompiles,                // the job compiles at all
  kLessCompileTime,
};

// What the experiment must offer for the fix to act at all.
enum class Requirement {
  kNone,
  kCompiledJob,         // the job uses torch.compile
  kCuda,                // the job runs on a CUDA device
  kSharedCompileCache,  // runs share a compile cache (--shared-compile-cache)
};

struct FixSpec {
  std::string_view id;
  FixKind kind;
  bool has_source_form;  // a runtime fix whose permanent form is also a rewrite (its diff is shown)
  std::string_view summary;
  Effect effect = Effect::kFasterStep;
  Requirement requirement = Requirement::kNone;
  // The argument picks one of several ways to make the same change (a compile mode, a quantization scheme): each
  // `id:arg` is measured as a fix of its own, and at most one of them goes into the combination.
  bool arg_picks_variant = false;
};

[[nodiscard]] const std::vector<FixSpec>& fixCatalog();
[[nodiscard]] const FixSpec* findFix(std::string_view id);
[[nodiscard]] std::string_view kindName(FixKind kind);
[[nodiscard]] std::string_view effectName(Effect effect);  // e.g. "fewer shape recompiles"

// A fix to try: its catalogue entry and the optional argument of `id:arg`.
struct FixRequest {
  std::string id;
  std::string arg;
  FixKind kind = FixKind::kRuntime;
  bool has_source_form = false;
  Effect effect = Effect::kFasterStep;
  Requirement requirement = Requirement::kNone;
  bool arg_picks_variant = false;
  // The TORCHSCOPE_FIXES / rewrite --fix entry: "id" or "id:arg".
  [[nodiscard]] std::string spec() const;
};

// Parses "a,b:x". Unknown ids and unknown quantization schemes are an Error (kInvalidArgument); a fix named twice
// is kept once (by id, or by id and argument where the argument picks a variant). The test-only id
// `test-change-results` is accepted when `allow_test_fixes`.
[[nodiscard]] Result<std::vector<FixRequest>> parseFixList(std::string_view text, bool allow_test_fixes = false);

// The collector bridge's torch-import hook (TORCHSCOPE_TORCH_IMPORT_HOOKS) that applies TORCHSCOPE_FIXES in
// every traced Python process of a job, from torchscope_compiler in the compiler's Python folder.
inline constexpr const char* kRuntimeFixesHook = "torchscope_compiler.runtime:on_torch_import";

}  // namespace torchscope::compiler
