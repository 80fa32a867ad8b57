// Which fixes to try: the explicit list, else the fix ids of the findings (the store's findings
// table, else `torchscope advise --format json`), else fixes suggested by what the profile run
// measured (recompiles, graph breaks, no compile at all) plus every source fix.
#pragma once

#include <string>
#include <vector>

#include "torchscope/compiler/Experiment.h"
#include "torchscope/compiler/Measurement.h"

namespace torchscope::compiler {

[[nodiscard]] Result<std::vector<FixRequest>> chooseCandidates(const FixOptions& options,
                                                               const std::string& findings_store,
                                                               const RunMeasurement& profile,
                                                               std::vector<std::string>& notes);

}  // namespace torchscope::compiler
