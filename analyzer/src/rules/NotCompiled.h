// compile/not-compiled from the bridge's op census (rules/NotCompiledCensus.cpp); the trace-based form is in
// rules/Compile.cpp, which calls this one when the store holds no profiler op records.
#pragma once

#include "../Rules.h"

namespace torchscope::analyzer {

Result<void> notCompiledFromCensus(const Context& context, std::vector<Finding>& out);

}  // namespace torchscope::analyzer
