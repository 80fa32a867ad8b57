// Analysis time of a 10 M-event store: builds the store once (kernels and their launch calls, CPU ops, copies,
// syncs, steps, compiles), then times analyze() a few times. Usage: bench_analyzer [STORE] [EVENTS] [SWAP_EVERY]
// SWAP_EVERY > 0 stores every SWAP_EVERY-th kernel after the one that follows it, as CUPTI buffers hold kernels of
// concurrent streams (0, the default: in start order). An existing STORE is reused when this build reads it. Results go to docs/performance.md.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <vector>

#include "ReusedStore.h"
#include "SyntheticStore.h"
#include "torchscope/analyzer/Analyzer.h"

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "analyzer_bench.db";
  const std::int64_t events = argc > 2 ? std::stoll(argv[2]) : 10'000'000;
  const std::int64_t swap_every = argc > 3 ? std::stoll(argv[3]) : 0;
  if (!reusableStore(path)) {
    const auto begin = std::chrono::steady_clock::now();
    const std::int64_t written = buildSyntheticStore(path, {.events = events, .swap_every = swap_every});
    fmt::print("built {} with {} events in {:.1f} s\n", path, written,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  }
  std::vector<double> seconds;
  std::vector<double> cpu_seconds;  // on a shared machine the CPU time says more than the wall time
  std::size_t findings = 0;
  for (int run = 0; run < 3; ++run) {
    const auto begin = std::chrono::steady_clock::now();
    const std::clock_t cpu_begin = std::clock();
    auto analysis = torchscope::analyzer::analyze({path});
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    cpu_seconds.push_back(static_cast<double>(std::clock() - cpu_begin) / CLOCKS_PER_SEC);
    if (!analysis) {
      fmt::print(stderr, "analysis failed: {}\n", analysis.error().message);
      return 1;
    }
    findings = analysis->findings.size();
    if (run == 0) {
      for (const auto& finding : analysis->findings)
        fmt::print("  {} ({:.3f} s)\n", finding.rule.text(), finding.impact_seconds);
    }
  }
  std::sort(seconds.begin(), seconds.end());
  std::sort(cpu_seconds.begin(), cpu_seconds.end());
  fmt::print("analyze: {} findings; wall min {:.3f} s, median {:.3f} s, max {:.3f} s; CPU median {:.3f} s over {} runs\n",
             findings, seconds.front(), seconds[seconds.size() / 2], seconds.back(), cpu_seconds[cpu_seconds.size() / 2],
             seconds.size());
  return 0;
}
