// Multi-rank analysis at scale: a run folder of RANKS synthetic stores of EVENTS events each (default 64 x 1 M),
// rank 5 a straggler and rank 9 with an extra recompile, then analyze() over the folder a few times (every rule on
// every rank, the ranks side by side). Usage: bench_ranks [--build-only] [FOLDER] [RANKS] [EVENTS]. An existing
// FOLDER is reused; --build-only writes the folder and stops (bench/ranks_dask.py and the Dask test analyse it with
// `torchscope advise --dask`). Results go to docs/performance.md.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <string_view>
#include <thread>
#include <vector>

#include "SyntheticStore.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/store/RunFolder.h"

#include "ProcessCpu.h"

namespace {

constexpr std::int64_t kStragglerRank = 5;
constexpr std::int64_t kDivergentRank = 9;

void buildFolder(const std::filesystem::path& folder, std::int64_t ranks, std::int64_t events) {
  std::filesystem::create_directories(folder);
  std::atomic<std::int64_t> next{0};
  const auto work = [&] {
    for (std::int64_t rank = next++; rank < ranks; rank = next++) {
      SyntheticStoreOptions options;
      options.events = events;
      options.rank = rank;
      options.world_size = ranks;
      options.extra_ns_per_group = rank == kStragglerRank ? 200'000 : 0;
      options.extra_recompiles = rank == kDivergentRank ? 3 : 0;
      buildSyntheticStore((folder / fmt::format("run.rank{}.{}.db", rank, 1000 + rank)).string(), options);
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < std::max(1u, std::thread::hardware_concurrency()); ++t) threads.emplace_back(work);
  work();
  for (auto& thread : threads) thread.join();
}

}  // namespace

int main(int argc, char** argv) {
  const bool build_only = argc > 1 && std::string_view(argv[1]) == "--build-only";
  if (build_only) --argc, ++argv;
  const std::filesystem::path folder = argc > 1 ? argv[1] : "ranks_bench";
  const std::int64_t ranks = argc > 2 ? std::stoll(argv[2]) : 64;
  const std::int64_t events = argc > 3 ? std::stoll(argv[3]) : 1'000'000;
  if (!std::filesystem::exists(folder)) {
    const auto begin = std::chrono::steady_clock::now();
    buildFolder(folder, ranks, events);
    fmt::print("built {} ranks x {} events in {} in {:.1f} s\n", ranks, events, folder.string(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  }
  if (build_only) return 0;
  auto stores = torchscope::store::expandRunFolders({folder.string()});
  if (!stores) {
    fmt::print(stderr, "{}\n", stores.error().message);
    return 1;
  }
  std::vector<double> seconds, cpu_seconds;
  for (int run = 0; run < 3; ++run) {
    const auto begin = std::chrono::steady_clock::now();
    const double cpu_begin = torchscope::bench::processCpuSeconds();
    auto analysis = torchscope::analyzer::analyze(*stores);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    cpu_seconds.push_back(torchscope::bench::processCpuSeconds() - cpu_begin);
    if (!analysis) {
      fmt::print(stderr, "analysis failed: {}\n", analysis.error().message);
      return 1;
    }
    if (run == 0) {
      fmt::print("{} ranks, {} stragglers, {} divergences, {} findings\n", analysis->ranks.ranks.size(),
                 analysis->ranks.stragglers.size(), analysis->ranks.divergences.size(), analysis->findings.size());
      for (const auto& finding : analysis->findings) fmt::print("  {}: {}\n", finding.rule.text(), finding.title);
    }
  }
  std::sort(seconds.begin(), seconds.end());
  std::sort(cpu_seconds.begin(), cpu_seconds.end());
  fmt::print("analyze {} stores: wall min {:.2f} s, median {:.2f} s, max {:.2f} s; CPU (all threads) median {:.2f} s; "
             "{} hardware threads\n",
             stores->size(), seconds.front(), seconds[1], seconds.back(), cpu_seconds[1], std::thread::hardware_concurrency());
  return 0;
}
