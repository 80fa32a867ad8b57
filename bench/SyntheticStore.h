// A synthetic store for the benchmarks: per 100 events 40 kernels, 40 launch calls, 15 CPU ops, 3 copies and
// 2 syncs, a step every 1 000 events, one compilation. As one rank of a job (`rank` >= 0) it also records its
// process with rank and world size, and the 40th kernel of each 100 events is an NCCL all-reduce on its own stream.
#pragma once

#include <cstdint>
#include <string>

struct SyntheticStoreOptions {
  std::int64_t events = 10'000'000;
  std::int64_t swap_every = 0;        // > 0: every swap_every-th kernel is stored after the one that follows it
  std::int64_t rank = -1;
  std::int64_t world_size = -1;
  std::int64_t collective_ns = 20'000;       // each NCCL kernel's length
  std::int64_t extra_ns_per_group = 0;       // more host time per 100 events: a straggler
  std::int64_t extra_recompiles = 0;         // recompiles of `forward` for a shape (a divergent rank)
};

// Writes the store (exits with a message when it cannot); returns the events written.
std::int64_t buildSyntheticStore(const std::string& path, const SyntheticStoreOptions& options);
