// The line table of one store for the analysis (the public side is torchscope/analyzer/LineTable.h).
#pragma once

#include "Rules.h"
#include "torchscope/analyzer/LineTable.h"

namespace torchscope::analyzer {

// The steady-state steps' samples (every sample when the run has no steady steps), by line of the user's code.
[[nodiscard]] Result<LineTable> buildLineTable(const store::Reader& reader, const Facts& facts,
                                               const store::CodeRoots& code);

}  // namespace torchscope::analyzer
