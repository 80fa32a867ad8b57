// Classifications of torch.compile events that belong to the trace model, shared by the live
// collector and the importers so that both store the same cause for the same text.
#pragma once

#include <string>
#include <string_view>

namespace torchscope::store {

// Cause class of one recompilation from its failing guard text(s):
//   "dynamic-shape"    tensor size or stride guard ("size mismatch at index 0")
//   "python-scalar"    a Python int/float guarded by value ("L['self'].param_groups[0]['lr'] == 0.01")
//   "type-or-identity" type, id or object identity guards, dtype/device/requires_grad mismatches
//   "other"            anything else
std::string classifyRecompile(std::string_view guard_failures);

// True when torch says the recompile limit was hit and the frame falls back to eager.
bool isRecompileLimitHit(std::string_view message);

}  // namespace torchscope::store
