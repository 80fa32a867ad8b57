// Who this process is in a distributed job, read from what the launcher put in the environment:
// torchrun (RANK, LOCAL_RANK, WORLD_SIZE, TORCHELASTIC_RUN_ID), Open MPI's mpirun
// (OMPI_COMM_WORLD_*), MPICH/Intel MPI (PMI_*), and Slurm's srun (SLURM_PROCID, SLURM_LOCALID,
// SLURM_NTASKS, SLURM_JOB_ID). torch's own variables win: torchrun inside srun names the ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace torchscope::collector {

struct RankIdentity {
  std::int64_t rank = -1;
  std::int64_t local_rank = -1;
  std::int64_t world_size = -1;
  std::string launcher;  // "torchrun", "mpirun", "srun", "env" (RANK set by hand), "" outside a distributed job
  std::string job_id;    // the launcher's job id (Slurm job, torchrun run id, MPI job), "" unknown
};

// `lookup` returns a variable's value or "" (the process environment in the collector, a map in tests).
[[nodiscard]] RankIdentity rankIdentityFrom(const std::function<std::string(const char*)>& lookup);
[[nodiscard]] RankIdentity rankIdentityFromEnvironment();

}  // namespace torchscope::collector
