// `advise --dask`: the map step on a Dask cluster, the merge here. The driver is Python (torchscope.dask_advise,
// installed with the package); this starts it with the Python of torchscope's environment.
#pragma once

#include <string>
#include <vector>

namespace torchscope::cli {

inline constexpr double kDaskConnectTimeoutSeconds = 20;

struct DaskRequest {
  std::vector<std::string> stores;  // stores or run folders, as the workers see them
  std::string scheduler;            // "" a local cluster
  int workers = 0;                  // the local cluster's worker processes, 0 one per CPU
  double timeout_s = kDaskConnectTimeoutSeconds;
  std::string format;
  std::string output;
  std::vector<std::string> user_code;
  bool absolute_paths = false;
};

// Replaces this process with the driver; returns only by failing (exit code 1, with what to install).
[[noreturn]] void startDaskAdvise(const DaskRequest& request);

}  // namespace torchscope::cli
