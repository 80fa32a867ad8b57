// A DDP job's per-rank stores written through store::Writer, for the multi-rank tests: host collectives of DDP
// buckets, or NCCL kernels as CUPTI records them.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "TestSupport.h"
#include "torchscope/store/Writer.h"

namespace torchscope::analyzer::testing {

inline constexpr base::Nanos kMs = 1'000'000;
inline constexpr base::Nanos kStart = 5'000 * kMs;

struct RankPlan {
  std::int64_t rank = 0;
  base::Nanos compute_ns = 20 * kMs;  // backward compute before the last bucket is launched
  base::Nanos step_ns = 40 * kMs;     // every rank's step (they wait for each other)
  base::Nanos wall_offset_ns = 0;     // when this rank started, relative to rank 0
  bool nccl = false;                  // GPU: NCCL kernels instead of host-side DDP buckets
};

// A rank of a DDP job: 8 steps; per step two gradient buckets, the last launched when compute ends and
// completing at the end of the step (the rank waited from its launch to the step's end).
inline void writeRank(const std::string& path, const RankPlan& plan, std::int64_t world_size) {
  auto opened = store::Writer::open(path);
  ASSERT_TRUE(opened.ok());
  store::Writer& writer = **opened;
  store::RunInfo run;
  run.host = "node0";
  run.start_ns = kStart;
  run.start_wall_ns = 1'700'000'000'000'000'000 + plan.wall_offset_ns;
  run.source = "collector";
  writer.setRun(run);
  store::Process process;
  process.pid = 100 + plan.rank;
  process.name = "python";
  process.rank = plan.rank;
  process.local_rank = plan.rank;
  process.world_size = world_size;
  process.start_ns = kStart;
  writer.add(process);
  for (std::int64_t step = 0; step < 8; ++step) {
    const base::Nanos begin = kStart + step * plan.step_ns;
    writer.add(store::Step{process.pid, 1, step, begin, begin + plan.step_ns, "optimizer"});
    const base::Nanos last_launch = begin + plan.compute_ns;
    if (plan.nccl) {
      // Compute kernel over [begin, last_launch); the NCCL all-reduce from half-way through compute to the step's end.
      writer.add(store::Kernel{.pid = process.pid,
                               .device = 0,
                               .stream = 7,
                               .start_ns = begin,
                               .end_ns = last_launch,
                               .name = "ampere_sgemm_128x64_nn"});
      writer.add(store::Kernel{.pid = process.pid,
                               .device = 0,
                               .stream = 13,
                               .start_ns = begin + plan.compute_ns / 2,
                               .end_ns = begin + plan.step_ns,
                               .name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"});
      continue;
    }
    for (const auto& [start, last] : {std::pair{begin + plan.compute_ns / 2, false}, std::pair{last_launch, true}}) {
      store::Collective bucket;
      bucket.pid = process.pid;
      bucket.tid = 1;
      bucket.start_ns = start;
      bucket.end_ns = begin + plan.step_ns;
      bucket.name = "ddp:allreduce";
      bucket.op = "allreduce";
      bucket.source = "ddp";
      bucket.last_bucket = last;
      writer.add(bucket);
    }
  }
  ASSERT_TRUE(writer.close(kStart + 8 * plan.step_ns).ok());
}

inline std::vector<std::string> writeFolder(const TempDir& dir, const std::vector<RankPlan>& plans) {
  std::vector<std::string> paths;
  for (const auto& plan : plans) {
    paths.push_back(dir.file("run.rank" + std::to_string(plan.rank) + ".1.db"));
    writeRank(paths.back(), plan, static_cast<std::int64_t>(plans.size()));
  }
  return paths;
}

}  // namespace torchscope::analyzer::testing
