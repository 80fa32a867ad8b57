// The stores a job's other processes wrote beside its first store: found by the collector's names only.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "torchscope/store/RunFolder.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::store {
namespace {

namespace fs = std::filesystem;

TEST(CompanionStores, TheRanksAndWorkersBesideALaunchersStoreInRankOrder) {
  const testing::TempDir dir;
  for (const char* name : {"run.db", "run.rank1.301.db", "run.rank0.300.db", "run.4242.db", "run.rank0.db",
                           "runner.rank0.5.db", "run.rank1.301.db-wal", "other.db", "run.rankx.3.db"}) {
    std::ofstream(dir.path() / name) << "x";
  }
  const std::string launcher = (dir.path() / "run.db").string();
  const auto names = [](const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const auto& path : paths) out.push_back(fs::path(path).filename().string());
    return out;
  };
  // Unranked processes first (rank -1), then by rank.
  EXPECT_EQ(names(companionStores(launcher)),
            (std::vector<std::string>{"run.4242.db", "run.rank0.300.db", "run.rank1.301.db"}));
  EXPECT_TRUE(companionStores((dir.path() / "run.rank0.300.db").string()).empty());

  std::vector<std::string> added;
  const auto all = withCompanionStores({launcher, (dir.path() / "run.rank1.301.db").string()}, &added);
  EXPECT_EQ(names(all), (std::vector<std::string>{"run.db", "run.4242.db", "run.rank0.300.db", "run.rank1.301.db"}));
  EXPECT_EQ(names(added), (std::vector<std::string>{"run.4242.db", "run.rank0.300.db"}));
}

}  // namespace
}  // namespace torchscope::store
