// CPU time of this process, all threads (user + system): the benchmarks' measure on a shared, noisy
// machine, where wall time counts other people's load.
#pragma once

#include <sys/resource.h>

namespace torchscope::bench {

inline double processCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace torchscope::bench
