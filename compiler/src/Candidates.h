// Which fixes to try: the explicit list, else the fixes of the findings, most estimated impact
// first (the store's findings table, else `torchscope advise --format json`), else fixes suggested
// by what the profile run measured (recompiles, graph breaks, no compile at all) plus every source fix.
#pragma once

#include <string>
#include <vector>

#include "torchscope/compiler/Experiment.h"
#include "torchscope/compiler/Measurement.h"

namespace torchscope::compiler {

struct Candidate {
  FixRequest request;
  double impact_fraction = -1;  // the estimated share of the run of all its findings; -1 unknown
  std::string finding;          // its largest finding, e.g. "recompile/dynamic-shape at model.py:41"
};

[[nodiscard]] Result<std::vector<Candidate>> chooseCandidates(const FixOptions& options, const std::string& findings_store,
                                                              const RunMeasurement& profile,
                                                              std::vector<std::string>& notes);

}  // namespace torchscope::compiler
