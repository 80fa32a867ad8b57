// Rank identity from the variables each launcher sets (as torchrun 2.13, Open MPI 4/5 and Slurm 23 set them).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "RankIdentity.h"

namespace torchscope::collector {
namespace {

RankIdentity identityOf(const std::map<std::string, std::string>& environment) {
  return rankIdentityFrom([&](const char* name) {
    const auto it = environment.find(name);
    return it == environment.end() ? std::string() : it->second;
  });
}

TEST(RankIdentity, Torchrun) {
  const auto identity = identityOf({{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"},
                                    {"TORCHELASTIC_RUN_ID", "job-7"}, {"GROUP_RANK", "1"}});
  EXPECT_EQ(identity.rank, 3);
  EXPECT_EQ(identity.local_rank, 1);
  EXPECT_EQ(identity.world_size, 4);
  EXPECT_EQ(identity.launcher, "torchrun");
  EXPECT_EQ(identity.job_id, "job-7");
}

TEST(RankIdentity, OpenMpi) {
  const auto identity = identityOf({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                    {"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_MCA_ess_base_jobid", "2718236673"}});
  EXPECT_EQ(identity.rank, 5);
  EXPECT_EQ(identity.local_rank, 1);
  EXPECT_EQ(identity.world_size, 8);
  EXPECT_EQ(identity.launcher, "mpirun");
  EXPECT_EQ(identity.job_id, "2718236673");
}

TEST(RankIdentity, SlurmSrun) {
  const auto identity = identityOf({{"SLURM_PROCID", "12"}, {"SLURM_LOCALID", "4"}, {"SLURM_NTASKS", "16"},
                                    {"SLURM_JOB_ID", "991"}});
  EXPECT_EQ(identity.rank, 12);
  EXPECT_EQ(identity.local_rank, 4);
  EXPECT_EQ(identity.world_size, 16);
  EXPECT_EQ(identity.launcher, "srun");
  EXPECT_EQ(identity.job_id, "991");
}

TEST(RankIdentity, TorchrunInsideSlurmKeepsTorchsRanksAndTheSlurmJob) {
  const auto identity = identityOf({{"RANK", "2"}, {"LOCAL_RANK", "2"}, {"WORLD_SIZE", "8"},
                                    {"TORCHELASTIC_RUN_ID", "none"}, {"SLURM_PROCID", "0"}, {"SLURM_JOB_ID", "991"}});
  EXPECT_EQ(identity.rank, 2);
  EXPECT_EQ(identity.launcher, "torchrun");
  EXPECT_EQ(identity.job_id, "991");
}

TEST(RankIdentity, RankSetByHandAndNoLauncher) {
  EXPECT_EQ(identityOf({{"RANK", "1"}, {"WORLD_SIZE", "2"}}).launcher, "env");
  const auto none = identityOf({});
  EXPECT_EQ(none.rank, -1);
  EXPECT_EQ(none.launcher, "");
  EXPECT_EQ(identityOf({{"LOCAL_RANK", "0"}}).local_rank, 0);
  EXPECT_EQ(identityOf({{"RANK", "x"}}).rank, -1);
}

}  // namespace
}  // namespace torchscope::collector
