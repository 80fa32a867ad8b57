// `torchscope fix` on distributed jobs: a 2-rank gloo DDP job under torch.compile, started by torchrun
// (and by `python -m torch.distributed.run`), re-run whole with the fix in every rank; a rank that fails
// fails the variant with its own stderr; mpirun/srun are refused with the reason. And `advise run.db`
// on torchrun's store brings in the ranks' stores beside it and names the straggler.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "FixHarness.h"
#include "torchscope/compiler/Process.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;

const std::string kTorchrun = (fs::path(TORCHSCOPE_PYTHON).parent_path() / "torchrun").string();

// aot_eager compiles in a fraction of Inductor's time; the recompiles on shapes are the same.
std::map<std::string, std::string> ddpEnvironment(std::map<std::string, std::string> extra = {}) {
  extra.insert({{"OMP_NUM_THREADS", "1"},
                {"GLOO_SOCKET_IFNAME", "lo"},
                {"BACKEND", "aot_eager"},
                {"STEPS", "6"},
                {"BATCHES", "16,24,32"}});
  return extra;
}

TEST_F(FixEndToEnd, TorchrunDdpJobIsReRunWholeWithTheFixInEveryRank) {
  if (!fs::exists(kTorchrun)) GTEST_SKIP() << "no torchrun beside " << TORCHSCOPE_PYTHON;
  const fs::path script = copyScript("ddp_job.py");
  const auto report = fix({"--repetitions", "2", "--fixes", "dynamic-shapes", "--", kTorchrun, "--standalone",
                           "--nproc_per_node=2", script.string()},
                          0, ddpEnvironment());
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["verdict_metric"], "steady_step_wall");  // the job's step time, its slowest rank's
  const auto& dynamic = fixNamed(report, "dynamic-shapes");
  EXPECT_TRUE(dynamic["measured"].get<bool>()) << dynamic.dump(2);
  EXPECT_TRUE(dynamic["effect"]["shown"].get<bool>()) << dynamic.dump(2);
  // Both ranks' 6 losses each, compared value by value.
  EXPECT_TRUE(dynamic["parity"]["checked"].get<bool>()) << dynamic.dump(2);
  EXPECT_TRUE(dynamic["parity"]["ok"].get<bool>()) << dynamic.dump(2);
  EXPECT_TRUE(dynamic["payoff"].is_object()) << dynamic.dump(2);
  bool noted = false;
  for (const auto& note : report["notes"]) noted |= note.get<std::string>().find("2 ranks") != std::string::npos;
  EXPECT_TRUE(noted) << report["notes"].dump();
}

TEST_F(FixEndToEnd, ARankThatFailsFailsTheVariantWithItsStderr) {
  const fs::path script = copyScript("ddp_job.py");
  const auto report = fix({"--repetitions", "2", "--fixes", "dynamic-shapes", "--", TORCHSCOPE_PYTHON, "-m",
                           "torch.distributed.run", "--standalone", "--nproc_per_node", "2", script.string()},
                          0, ddpEnvironment({{"FAIL_RANK", "1"}, {"FAIL_ONLY_UNDER_FIXES", "1"}}));
  ASSERT_TRUE(report.is_object());
  const auto& dynamic = fixNamed(report, "dynamic-shapes");
  EXPECT_EQ(dynamic["status"], "rejected");
  const std::string reason = dynamic["reason"].get<std::string>();
  EXPECT_NE(reason.find("rank 1"), std::string::npos) << reason;
  EXPECT_NE(reason.find("injected"), std::string::npos) << reason;  // the rank's own stderr
  EXPECT_EQ(dynamic["runs"], 1);
}

TEST_F(FixEndToEnd, MpirunAndSrunAreRefusedWithTheReason) {
  for (const char* launcher : {"mpirun", "srun"}) {
    ProcessSpec spec;
    spec.argv = {TORCHSCOPE_BINARY_DIR "/bin/torchscope", "fix", "--", launcher, "-np", "2", "python", "train.py"};
    spec.stderr_path = (dir_ / "err.txt").string();
    auto result = runProcess(spec);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result->exit_code, 2);
    const std::string error = readTextFile(spec.stderr_path);
    EXPECT_NE(error.find(std::string("cannot re-run `") + launcher), std::string::npos) << error;
    EXPECT_NE(error.find("torchrun"), std::string::npos) << error;
  }
}

// torchrun's own store is run.db; its ranks write run.rank<r>.<pid>.db beside it. Given run.db alone,
// advise reads them too and names rank 1, 20 ms slower per step.
TEST_F(FixEndToEnd, AdviseOnTheLaunchersStoreNamesTheStraggler) {
  if (!fs::exists(kTorchrun)) GTEST_SKIP() << "no torchrun beside " << TORCHSCOPE_PYTHON;
  const fs::path script = copyScript("ddp_job.py");
  ProcessSpec job;
  job.argv = {TORCHSCOPE_BINARY_DIR "/bin/torchscope",
              "run",
              "-o",
              (dir_ / "run.db").string(),
              "--",
              kTorchrun,
              "--standalone",
              "--nproc_per_node=2",
              script.string()};
  job.environment = ddpEnvironment({{"SLOW_RANK", "1"}, {"SLOW_SECONDS", "0.02"}, {"STEPS", "12"}, {"BATCHES", "32"}});
  job.stdout_path = (dir_ / "job.out").string();
  job.stderr_path = (dir_ / "job.err").string();
  auto ran = runProcess(job);
  ASSERT_TRUE(ran.ok());
  ASSERT_EQ(ran->exit_code, 0) << readTextFile(job.stderr_path);

  ProcessSpec advise;
  advise.argv = {TORCHSCOPE_BINARY_DIR "/bin/torchscope", "advise", (dir_ / "run.db").string()};
  advise.stdout_path = (dir_ / "advice.txt").string();
  advise.stderr_path = (dir_ / "advice.err").string();
  auto advised = runProcess(advise);
  ASSERT_TRUE(advised.ok());
  EXPECT_EQ(advised->exit_code, 0);
  const std::string advice = readTextFile(advise.stdout_path);
  EXPECT_NE(advice.find("Rank 1 is a straggler"), std::string::npos) << advice;
  EXPECT_NE(readTextFile(advise.stderr_path).find("also reading the 2 store(s)"), std::string::npos);

  // --only-given: the launcher's store alone, which saw no step.
  advise.argv.push_back("--only-given");
  advised = runProcess(advise);
  ASSERT_TRUE(advised.ok());
  EXPECT_EQ(readTextFile(advise.stdout_path).find("straggler"), std::string::npos);
}

}  // namespace
}  // namespace torchscope::compiler
