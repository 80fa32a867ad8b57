// The HTML report's timeline overview of one store: its steps, compilations, graph breaks, recompiles and host
// memory on one time axis, and where on that axis each finding's events happened.
#pragma once

#include <vector>

#include "Rules.h"

namespace torchscope::analyzer {

[[nodiscard]] Result<Overview> buildOverview(const Context& context, const std::vector<Finding>& findings);

}  // namespace torchscope::analyzer
