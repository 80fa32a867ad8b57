// The stack sampler end to end: real jobs under `torchscope run`, their stack samples checked in the store and in
// the line table: a known hot line leads it with a plausible share, threads and fork() children are sampled apart,
// idle threads (a compiled job's compile workers) are left out of the lines, the capture window bounds the samples,
// and TORCHSCOPE_SAMPLE_HZ=0 records none.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "JobScripts.h"
#include "torchscope/analyzer/LineTable.h"
#include "torchscope/store/Reader.h"
#include "torchscope/testing/StoreRows.h"
#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kScript = "sampled_hot_line.py";

analyzer::LineTable linesOf(const store::Reader& reader) {
  auto table = analyzer::lineTable(reader);
  EXPECT_TRUE(table.ok()) << (table.ok() ? "" : table.error().message);
  return table.ok() ? *table : analyzer::LineTable{};
}

const analyzer::LineTime* findLine(const analyzer::LineTable& table, int line) {
  for (const auto& entry : table.lines) {
    if (entry.line == line && entry.file.ends_with(kScript)) return &entry;
  }
  return nullptr;
}

// Every job here samples at the rate a user gets without asking (100 Hz), whatever the environment says.
class DefaultRate : public ::testing::Environment {
 public:
  void SetUp() override { unsetenv("TORCHSCOPE_SAMPLE_HZ"); }
};
const ::testing::Environment* const kDefaultRate = ::testing::AddGlobalTestEnvironment(new DefaultRate);

ProgramOutcome runJob(const fs::path& store, const std::vector<std::string>& args, const ProgramOptions& options = {}) {
  std::vector<std::string> argv = {TORCHSCOPE_PYTHON, scriptPath(kScript).string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return runUnderTorchscope(store, argv, options);
}

TEST(StackSampler, TheHotLineLeadsTheLineTableAndTheStepsAddUp) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  const ProgramOutcome job = runJob(store, {"30"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, "done\n");
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  const analyzer::LineTable table = linesOf(*reader);
  ASSERT_TRUE(table.recorded);
  ASSERT_GT(table.steps, 20);
  ASSERT_FALSE(table.lines.empty());
  const int hot = scriptLine(kScript, "hot");
  const int nap = scriptLine(kScript, "nap");
  EXPECT_EQ(table.lines.front().line, hot) << table.lines.front().file << ":" << table.lines.front().line;
  // 200 products of 200x200 matrices against a 10 ms sleep: most of the step, whatever the machine's speed.
  EXPECT_GT(table.lines.front().share, 0.3);
  EXPECT_LE(table.lines.front().share, 1.05);
  const analyzer::LineTime* napping = findLine(table, nap);
  ASSERT_NE(napping, nullptr);
  EXPECT_GT(napping->self_per_step_s, 0.003);
  EXPECT_LT(napping->share, table.lines.front().share);
  // The threads' CPU time was read (how it splits between two lines a sample apart is not exact: a sample carries
  // the CPU time since the thread's previous one).
  EXPECT_GT(table.lines.front().self_cpu_s, 0);

  // Each steady step's sampled time on the step's thread is about the step's own length.
  const auto steps = rows<store::Step>(*reader);
  ASSERT_FALSE(steps.empty());
  const std::int64_t main_tid = steps.front().tid;
  double step_ns = 0;
  double sampled_ns = 0;
  std::set<std::int64_t> counted;
  for (const auto& step : steps) {
    if (step.index < 2) continue;
    counted.insert(step.index);
    step_ns += static_cast<double>(step.end_ns - step.start_ns);
  }
  for (const auto& sample : rows<store::StackSample>(*reader)) {
    if (sample.tid == main_tid && counted.count(sample.step)) sampled_ns += static_cast<double>(sample.wall_ns);
  }
  EXPECT_GT(sampled_ns, 0.8 * step_ns);
  EXPECT_LT(sampled_ns, 1.2 * step_ns);

  const ProgramOutcome advise = runTorchscope("advise " + store.string());
  EXPECT_NE(advise.out.find("Time by line of your code"), std::string::npos) << advise.out;
  EXPECT_NE(advise.out.find(std::string(kScript) + ":" + std::to_string(hot)), std::string::npos) << advise.out;
}

// Every thread is sampled and stored; the line table leaves out the one that only waited (as py-spy does by default).
TEST(StackSampler, EveryThreadIsSampledWithItsNameAndIdleOnesAreLeftOutOfTheLines) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  const ProgramOutcome job = runJob(store, {"20", "threads"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  std::int64_t worker_tid = -1;
  std::int64_t idle_tid = -1;
  for (const auto& thread : rows<store::Thread>(*reader)) {
    if (thread.name == "sampled-worker") worker_tid = thread.tid;
    if (thread.name == "sampled-idle") idle_tid = thread.tid;
  }
  ASSERT_GT(worker_tid, 0);
  ASSERT_GT(idle_tid, 0);
  std::int64_t worker_samples = 0;
  std::int64_t idle_samples = 0;
  std::set<std::int64_t> tids;
  for (const auto& sample : rows<store::StackSample>(*reader)) {
    tids.insert(sample.tid);
    if (sample.tid == worker_tid) worker_samples += sample.samples;
    if (sample.tid == idle_tid) idle_samples += sample.samples;
  }
  EXPECT_GE(tids.size(), 3u);
  EXPECT_GT(worker_samples, 10);
  EXPECT_GT(idle_samples, 10);
  const analyzer::LineTable table = linesOf(*reader);
  EXPECT_EQ(table.threads, 2);  // the steps' thread and the worker
  EXPECT_NE(findLine(table, scriptLine(kScript, "worker")), nullptr);
  EXPECT_NE(findLine(table, scriptLine(kScript, "hot")), nullptr);
  EXPECT_EQ(findLine(table, scriptLine(kScript, "idle")), nullptr);
  EXPECT_GT(table.idle_samples, 10);
  // The steps' thread waits too (MARK:nap) and keeps its samples: its waiting is the step's time.
  EXPECT_NE(findLine(table, scriptLine(kScript, "nap")), nullptr);
}

// A real torch.compile job on the CPU: Inductor's compile workers and tqdm's monitor wait beside the steps. They are
// sampled and stored, and the line table leaves them out: its time is the steps' own, not that times the threads.
TEST(StackSampler, NoTimeBeforeTheStepsIsCreditedToThem) {
  // Three ticks a second and steps of 10 ms: the first sample inside the steps follows one taken in the set-up, a
  // third of a second earlier. The samples' time in the first N steps can be at most those steps' own, for every N
  // (without the rule, the first sampled step would hold up to a third of a second from the set-up).
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  ProgramOptions options;
  options.env["TORCHSCOPE_SAMPLE_HZ"] = "3";
  options.env["TORCHSCOPE_SAMPLE_BUDGET"] = "0";
  const ProgramOutcome job =
      runUnderTorchscope(store, {TORCHSCOPE_PYTHON, scriptPath("sampled_late_steps.py").string()}, options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, "done\n");
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  auto steps = rows<store::Step>(*reader);
  ASSERT_EQ(steps.size(), 150u);
  std::sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  std::map<std::int64_t, std::int64_t> wall_by_step;
  std::int64_t samples = 0;
  for (const auto& sample : rows<store::StackSample>(*reader)) {
    if (sample.step < 0) continue;
    wall_by_step[sample.step] += sample.wall_ns;
    samples += sample.samples;
  }
  ASSERT_GE(samples, 3) << "too few samples inside the steps to tell";
  std::int64_t sampled_ns = 0;
  for (const auto& step : steps) {
    sampled_ns += wall_by_step[step.index];
    EXPECT_LE(sampled_ns, step.end_ns - steps.front().start_ns) << "the samples up to step " << step.index;
  }
  EXPECT_GT(sampled_ns, (steps.back().end_ns - steps.front().start_ns) / 2);  // the intervals inside still count
}

TEST(StackSampler, IdleCompileWorkersOfACompiledJobAreLeftOutOfTheLines) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  const std::string script = "sampled_compiled.py";
  const ProgramOutcome job = runUnderTorchscope(store, {TORCHSCOPE_PYTHON, scriptPath(script).string(), "150"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  const auto steps = rows<store::Step>(*reader);
  ASSERT_FALSE(steps.empty());
  const std::int64_t main_tid = steps.front().tid;
  // Threads other than the steps' in the steps: those that only waited (every row of (almost) no CPU time), and
  // those that ran at some step (a worker can still finish a compile beside the first steps on a loaded machine).
  std::set<std::int64_t> waiting;
  std::set<std::int64_t> ran;
  std::string ran_rows;
  for (const auto& sample : rows<store::StackSample>(*reader)) {
    if (sample.tid == main_tid || sample.step < 0) continue;
    if (sample.cpu_ns >= 0 && sample.cpu_ns * 100 < sample.wall_ns) {
      waiting.insert(sample.tid);
    } else {
      ran.insert(sample.tid);
      ran_rows += " (step " + std::to_string(sample.step) + ", tid " + std::to_string(sample.tid) + ", wall " +
                  std::to_string(sample.wall_ns) + " ns, cpu " + std::to_string(sample.cpu_ns) + " ns)";
    }
  }
  for (std::int64_t tid : ran) waiting.erase(tid);
  ASSERT_FALSE(waiting.empty()) << "no thread beside the steps only waited: nothing to leave out";

  const analyzer::LineTable table = linesOf(*reader);
  ASSERT_TRUE(table.recorded);
  ASSERT_GT(table.steps, 100);
  // The threads that only waited are left out; the steps' thread counts, and so may one that ran in a steady step.
  EXPECT_GE(table.threads, 1);
  EXPECT_LE(table.threads, 1 + static_cast<std::int64_t>(ran.size())) << "rows of threads that ran:" << ran_rows;
  EXPECT_GT(table.idle_samples, table.samples / 2);  // at least two idle workers beside the one busy thread
  // The counted time is the steady steps' (one thread), and the user's code holds nearly all of it.
  const double steps_s = table.step_s * static_cast<double>(table.steps);
  EXPECT_GT(table.sampled_s, 0.8 * steps_s);
  EXPECT_LT(table.sampled_s, 1.2 * steps_s);
  EXPECT_GT(table.user_s, 0.9 * table.sampled_s);
  ASSERT_FALSE(table.lines.empty());
  EXPECT_THAT(table.lines.front().line,
              ::testing::AnyOf(scriptLine(script, "forward"), scriptLine(script, "backward")));
  double shares = 0;
  for (const auto& line : table.lines) shares += line.share;
  EXPECT_GT(shares, 0.8);
  EXPECT_LT(shares, 1.2);
}

TEST(StackSampler, AForkChildSamplesIntoItsOwnStoreAndLeavesThroughExit) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  const ProgramOutcome job = runJob(store, {"20", "fork"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, "done\n");
  fs::path child_store;
  for (const auto& entry : fs::directory_iterator(scratch.path())) {
    const std::string name = entry.path().filename().string();
    if (name != "run.db" && name.starts_with("run.") && name.ends_with(".db")) child_store = entry.path();
  }
  ASSERT_FALSE(child_store.empty()) << "no store of the fork() child";
  auto child = openStore(child_store);
  ASSERT_TRUE(child);
  const analyzer::LineTable table = linesOf(*child);
  ASSERT_TRUE(table.recorded);
  ASSERT_FALSE(table.lines.empty());
  EXPECT_EQ(table.lines.front().line, scriptLine(kScript, "child"));
  // The parent goes on sampling its own lines, and none of the child's. Not "the hot line first": in this short job
  // the parent's `import torch` outweighed it once under a clean-clone check's load.
  auto parent = openStore(store);
  ASSERT_TRUE(parent);
  const analyzer::LineTable parent_table = linesOf(*parent);
  EXPECT_NE(findLine(parent_table, scriptLine(kScript, "hot")), nullptr);
  EXPECT_EQ(findLine(parent_table, scriptLine(kScript, "child")), nullptr);
}

TEST(StackSampler, OnlyTheCaptureWindowIsSampled) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  const ProgramOutcome job = runProgram({torchscopeExecutable().string(), "run", "--steps", "10:20", "-o",
                                         store.string(), "--", TORCHSCOPE_PYTHON, scriptPath(kScript).string(), "30"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  const auto steps = rows<store::Step>(*reader);
  ASSERT_EQ(steps.size(), 10u);
  const std::int64_t window_ns = steps.back().end_ns - steps.front().start_ns;
  std::set<std::int64_t> sampled_steps;
  double main_ns = 0;
  for (const auto& sample : rows<store::StackSample>(*reader)) {
    EXPECT_TRUE(sample.step == -1 || (sample.step >= 10 && sample.step < 20)) << sample.step;
    if (sample.step >= 0) sampled_steps.insert(sample.step);
    if (sample.tid == steps.front().tid) main_ns += static_cast<double>(sample.wall_ns);
  }
  EXPECT_EQ(sampled_steps.size(), 10u);
  // The steps before and after the window are not credited to anything.
  EXPECT_LT(main_ns, 1.3 * static_cast<double>(window_ns));
}

TEST(StackSampler, ARateOfZeroRecordsNoSamples) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  ProgramOptions options;
  options.env["TORCHSCOPE_SAMPLE_HZ"] = "0";
  const ProgramOutcome job = runJob(store, {"5"}, options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  EXPECT_TRUE(rows<store::StackSample>(*reader).empty());
  EXPECT_TRUE(rows<store::Stack>(*reader).empty());
  EXPECT_EQ(rows<store::Step>(*reader).size(), 5u);
  const ProgramOutcome advise = runTorchscope("advise " + store.string());
  EXPECT_EQ(advise.out.find("Time by line"), std::string::npos) << advise.out;
}

// A rate that is not a whole number samples at the default, and the store says why.
TEST(StackSampler, AMalformedRateSamplesAtTheDefaultWithAWarning) {
  const TempDir scratch;
  const fs::path store = scratch.path() / "run.db";
  ProgramOptions options;
  options.env["TORCHSCOPE_SAMPLE_HZ"] = "fast";
  const ProgramOutcome job = runJob(store, {"5"}, options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto reader = openStore(store);
  ASSERT_TRUE(reader);
  EXPECT_FALSE(rows<store::StackSample>(*reader).empty());
  const auto diagnostics = rows<store::Diagnostic>(*reader);
  EXPECT_TRUE(std::any_of(diagnostics.begin(), diagnostics.end(), [](const store::Diagnostic& diagnostic) {
    return diagnostic.severity == "warning" &&
           diagnostic.message == "TORCHSCOPE_SAMPLE_HZ=fast is not a whole number from 0 to 1000: sampled at 100 Hz";
  }));
}

// TORCHSCOPE_SAMPLE_BUDGET holds the sampler's thread to a share of a core: a rate asked far above what the share
// pays for is spread out, and the store says so; a budget of 0 keeps the asked rate.
TEST(StackSampler, TheBudgetSpreadsTheTicksItCannotPayForAndZeroLiftsIt) {
  const TempDir scratch;
  struct Sampled {
    std::int64_t samples = 0;
    bool spread = false;
  };
  const auto sampled = [&](const std::string& name, const char* budget) {
    const fs::path store = scratch.path() / name;
    ProgramOptions options;
    options.env["TORCHSCOPE_SAMPLE_HZ"] = "1000";
    options.env["TORCHSCOPE_SAMPLE_BUDGET"] = budget;
    const ProgramOutcome job = runJob(store, {"8"}, options);
    EXPECT_EQ(job.exit_code, 0) << job.err;
    Sampled result;
    auto reader = openStore(store);
    EXPECT_TRUE(reader);
    if (!reader) return result;
    for (const auto& sample : rows<store::StackSample>(*reader)) result.samples += sample.samples;
    for (const auto& diagnostic : rows<store::Diagnostic>(*reader)) {
      if (diagnostic.message.starts_with("stack sampler: ") &&
          diagnostic.message.find("ticks asked every 1.0 ms") != std::string::npos) {
        result.spread =
            diagnostic.message.find("further apart, to keep its thread within 0.02 % of a core") != std::string::npos;
      }
    }
    return result;
  };
  // A tick costs 5 to 150 us of CPU from bare metal to a loaded virtual machine: at 0.02 % of a core, at most 40
  // ticks a second.
  const Sampled held = sampled("held.db", "0.02");
  const Sampled free = sampled("free.db", "0");
  EXPECT_TRUE(held.spread);
  EXPECT_FALSE(free.spread);
  EXPECT_GT(held.samples, 0);
  EXPECT_GT(free.samples, 5 * held.samples) << held.samples;
}

// `torchscope run --sample-hz N` sets the rate over TORCHSCOPE_SAMPLE_HZ; 0 turns the sampler off.
TEST(StackSampler, TheRunOptionSetsTheRateAndZeroTurnsItOff) {
  const TempDir scratch;
  const auto sampledSteps = [&](const std::string& name, const std::string& hz, const char* environment_hz) {
    const fs::path store = scratch.path() / name;
    ProgramOptions options;
    if (environment_hz != nullptr) options.env["TORCHSCOPE_SAMPLE_HZ"] = environment_hz;
    const ProgramOutcome job = runProgram({torchscopeExecutable().string(), "run", "--sample-hz", hz, "-o",
                                           store.string(), "--", TORCHSCOPE_PYTHON, scriptPath(kScript).string(), "5"},
                                          options);
    EXPECT_EQ(job.exit_code, 0) << job.err;
    auto reader = openStore(store);
    EXPECT_TRUE(reader);
    if (!reader) return std::int64_t{-1};
    EXPECT_EQ(rows<store::Step>(*reader).size(), 5u);
    std::int64_t samples = 0;
    for (const auto& sample : rows<store::StackSample>(*reader)) samples += sample.samples;
    return samples;
  };
  EXPECT_GT(sampledSteps("on.db", "200", "0"), 10);
  EXPECT_EQ(sampledSteps("off.db", "0", nullptr), 0);
  const ProgramOutcome too_fast = runTorchscope("run --sample-hz 5000 -- true");
  EXPECT_NE(too_fast.exit_code, 0);
  EXPECT_NE(too_fast.err.find("--sample-hz"), std::string::npos) << too_fast.err;
}

}  // namespace
}  // namespace torchscope::testing
