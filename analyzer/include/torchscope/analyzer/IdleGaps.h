// Why a GPU sat idle between two pieces of its work: the launch call of the work that ended the gap,
// found by correlation id. If the launch came after the GPU ran dry, the host was late (busy with
// something else); if it was issued before, the work was queued in time and waited on something on
// the GPU side (an event, another stream, a copy). The gpu/idle rule splits idle time the same way;
// the timeline uses this to shade each gap with its cause.
//
// Error contract: explainIdleGaps() fails only on SQLite errors; gaps whose launch is not in the
// store keep kUnknown.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "torchscope/store/Reader.h"

namespace torchscope::analyzer {

enum class IdleCause : std::uint8_t {
  kUnknown,   // no launch call recorded for the work after the gap
  kHostLate,  // the launch was issued after the GPU ran dry
  kQueued,    // the launch was issued before the gap began: the GPU waited on a dependency
};
[[nodiscard]] std::string_view idleCauseLabel(IdleCause cause);

struct IdleGap {
  std::int64_t device = -1;
  base::Nanos start_ns = 0;   // the end of the GPU's previous work
  base::Nanos end_ns = 0;     // the start of the work after the gap
  std::int64_t pid = 0;       // the process and correlation id of the work after the gap
  std::int64_t correlation_id = -1;
  // Filled by explainIdleGaps():
  IdleCause cause = IdleCause::kUnknown;
  std::int64_t launch_tid = -1;          // the thread that launched the work after the gap
  base::Nanos launch_start_ns = -1;      // when that launch call began
};

// Fills cause, launch_tid and launch_start_ns of every gap. `offset_ns` is added to the store's
// times before they are compared with the gaps' (0 when the gaps are on the store's own clock).
[[nodiscard]] Result<void> explainIdleGaps(const store::Reader& reader, std::vector<IdleGap>& gaps,
                                           base::Nanos offset_ns = 0);

}  // namespace torchscope::analyzer
