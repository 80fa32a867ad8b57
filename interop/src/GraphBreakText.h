// Reads torch's rendered graph-break message (the `dynamo_graph_break_reason` artifact payload).
#pragma once

#include <string_view>

#include "torchscope/store/Records.h"

namespace torchscope::interop {

// Fills break_type, reason, explanation, hints, gb_id, frame_skipped, file, line, function, user_stack and
// stack of `out` from the payload text; fields the text does not have are left as they are.
void parseGraphBreakText(std::string_view payload, store::GraphBreak& out);

}  // namespace torchscope::interop
