// The flame graph of one store for the analysis (the public side is torchscope/analyzer/FlameGraph.h).
#pragma once

#include "Rules.h"
#include "torchscope/analyzer/FlameGraph.h"

namespace torchscope::analyzer {

// The tree of `facts`' run, the steady-state steps chosen as the line table chooses them (Facts).
[[nodiscard]] Result<FlameGraph> buildFlameGraph(const store::Reader& reader, const Facts& facts,
                                                 const store::CodeRoots& code, const FlameOptions& options);

}  // namespace torchscope::analyzer
