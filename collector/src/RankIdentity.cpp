#include "RankIdentity.h"

#include <cstdlib>

#include "Environment.h"

namespace torchscope::collector {

namespace {

std::int64_t parseInteger(const std::string& value) {
  if (value.empty()) return -1;
  char* end = nullptr;
  const long long parsed = std::strtoll(value.c_str(), &end, 10);
  return end != nullptr && *end == '\0' && parsed >= 0 ? parsed : -1;
}

// The variables one launcher sets, most specific first.
struct LauncherVariables {
  const char* launcher;
  const char* rank;
  const char* local_rank;
  const char* world_size;
  const char* job_id;
};

constexpr LauncherVariables kLaunchers[] = {
    {"torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID"},
    {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_MCA_ess_base_jobid"},
    {"mpirun", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "PMIX_NAMESPACE"},
    {"srun", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_JOB_ID"},
};

}  // namespace

RankIdentity rankIdentityFrom(const std::function<std::string(const char*)>& lookup) {
  RankIdentity identity;
  for (const auto& variables : kLaunchers) {
    const std::int64_t rank = parseInteger(lookup(variables.rank));
    if (rank < 0) continue;
    identity.rank = rank;
    identity.local_rank = parseInteger(lookup(variables.local_rank));
    identity.world_size = parseInteger(lookup(variables.world_size));
    identity.job_id = lookup(variables.job_id);
    identity.launcher = variables.launcher;
    // RANK without torchelastic's variables was set by hand or by another launcher.
    if (identity.launcher == std::string("torchrun") && identity.job_id.empty()) identity.launcher = "env";
    break;
  }
  // LOCAL_RANK alone (a single-node launcher that sets only it).
  if (identity.rank < 0) identity.local_rank = parseInteger(lookup("LOCAL_RANK"));
  // A Slurm job id groups the ranks of every launcher started inside the allocation, across hosts.
  if (const std::string slurm_job = lookup("SLURM_JOB_ID"); !slurm_job.empty() && identity.rank >= 0) {
    identity.job_id = slurm_job;
  }
  return identity;
}

RankIdentity rankIdentityFromEnvironment() {
  return rankIdentityFrom([](const char* name) { return envString(name); });
}

}  // namespace torchscope::collector
