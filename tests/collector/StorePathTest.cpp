// Store naming for the processes of one job.
#include <gtest/gtest.h>

#include "Collector.h"

namespace torchscope::collector {
namespace {

TEST(StorePath, TheJobsFirstProcessWritesTheRequestedPath) {
  EXPECT_EQ(storePathFor("/runs/run.db", 42, true, -1), "/runs/run.db");
}

TEST(StorePath, OtherProcessesWriteNextToItWithTheirPid) {
  EXPECT_EQ(storePathFor("/runs/run.db", 42, false, -1), "/runs/run.42.db");
}

TEST(StorePath, RanksAreNamedWhenKnown) {
  EXPECT_EQ(storePathFor("/runs/run.db", 42, false, 3), "/runs/run.rank3.42.db");
}

TEST(StorePath, APathWithoutExtensionGetsDb) {
  EXPECT_EQ(storePathFor("/runs/trace", 7, false, -1), "/runs/trace.7.db");
}

TEST(StorePath, ARankStartedDirectlyByItsLauncherIsNamedByRankToo) {
  // mpirun/srun start every rank as a first process: the rank keeps their stores apart.
  EXPECT_EQ(storePathFor("/runs/run.db", 42, true, 5), "/runs/run.rank5.42.db");
}

}  // namespace
}  // namespace torchscope::collector
