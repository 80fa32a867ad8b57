// The environment of a job torchscope starts: `run`, every run of `fix` (and so of `demo`), and each rank of a
// distributed job they launch. The user's own settings stay as the user runs the job; torchscope's are added to
// them, never put in their place (an allocator preloaded into the job, tcmalloc or jemalloc, is part of what is
// measured).
//
// Error contract: nothing fails.
#pragma once

#include <string>
#include <string_view>

namespace torchscope::compiler {

// LD_PRELOAD for the job: the user's preloads (`user_preload`, the variable as found, ':' or ' ' separated) first,
// then the collector; the collector once, when the user had preloaded it already.
[[nodiscard]] std::string preloadWithCollector(std::string_view user_preload, std::string_view collector_library);

// LD_PRELOAD as the environment of this process has it, with the collector added (preloadWithCollector).
[[nodiscard]] std::string jobPreload(std::string_view collector_library);

}  // namespace torchscope::compiler
