// What a recompile finding says: a title, a message in plain words and the fix, per cause class
// (store/Classify.h) and, for Python numbers, per source of the value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../Locations.h"
#include "../Rules.h"

namespace torchscope::analyzer {

struct RecompiledFrame {
  Location frame;  // the compiled function (co_filename:co_firstlineno)
  bool library = false;
  std::int64_t recompiles = 0;
};

// Recompiles of one cause that point at one user line.
struct RecompileGroup {
  std::string cause;
  std::string detail;      // the first non-empty detail: the tensor, "grad_mode", the guarded expression, ...
  std::string guard;       // the failure that caused the first of them (the entry that could have served the call)
  std::string value_kind;  // "optimizer", "attribute", "item", "argument", "global" or ""
  Location location;       // where the finding points
  Location entry;          // the torch.compile call
  bool framework_entry = false;  // that call is a library's (a Trainer, accelerate), not a line the user writes
  Location call_site;      // the user's call into the compiled code
  Location value_source;   // where a guarded Python value is set
  std::int64_t count = 0;
  bool limit_hit = false;
  double compile_s = 0;
  std::vector<RecompiledFrame> frames;      // most recompiles first
  std::vector<std::string> guard_examples;  // guard failure texts (JSON arrays), the first three
};

struct RecompileAdvice {
  std::string title;
  std::string message;
  FixProposal fix;
};

RecompileAdvice recompileAdvice(const RecompileGroup& group, const Facts& facts);
// The limit was hit: the fix is the one of the cause, never a higher limit.
RecompileAdvice limitAdvice(const RecompileGroup& group, const FixProposal& cause_fix);

// "once", "twice", "3 times"
std::string times(std::int64_t count);

}  // namespace torchscope::analyzer
