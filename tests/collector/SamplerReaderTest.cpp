// The stack sampler's two readers on real jobs (StackSampler.h, PythonMemory.h): the reader without the GIL sees a
// thread that computes in pure Python for its true share of the time, where the GIL walk sees it at its next sleep;
// a DataLoader's workers are seen at their __getitem__ line; and both readers give the same stacks for the same
// frames (TORCHSCOPE_SAMPLE_READER=compare reads every tick both ways with the GIL held and counts the differences).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "JobScripts.h"
#include "torchscope/store/Reader.h"
#include "torchscope/testing/StoreRows.h"
#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::testing {
namespace {

namespace fs = std::filesystem;

// The frames of each stack, by stack id.
class StackFrames {
 public:
  explicit StackFrames(const store::Reader& reader) {
    for (const auto& frame : rows<store::StackFrame>(reader)) frames_[frame.id] = frame;
    for (const auto& stack : rows<store::Stack>(reader)) stacks_[stack.id] = stack;
  }
  // Whether any frame of the stack satisfies `matches`.
  template <class Match>
  bool contains(std::int64_t stack_id, const Match& matches) const {
    for (int depth = 0; depth < 1000 && stacks_.count(stack_id) != 0; ++depth) {
      const store::Stack& stack = stacks_.at(stack_id);
      const auto frame = frames_.find(stack.frame_id);
      if (frame != frames_.end() && matches(frame->second)) return true;
      stack_id = stack.parent_id;
    }
    return false;
  }

 private:
  std::map<std::int64_t, store::StackFrame> frames_;
  std::map<std::int64_t, store::Stack> stacks_;
};

// The share of thread `tid`'s sampled wall time whose stack has a frame that satisfies `matches` (-1: no samples).
template <class Match>
double shareOf(const store::Reader& reader, std::int64_t tid, const Match& matches) {
  const StackFrames stacks(reader);
  double all = 0;
  double matched = 0;
  for (const auto& sample : rows<store::StackSample>(reader)) {
    if (sample.tid != tid) continue;
    all += static_cast<double>(sample.wall_ns);
    if (stacks.contains(sample.stack_id, matches)) matched += static_cast<double>(sample.wall_ns);
  }
  return all > 0 ? matched / all : -1;
}

bool hasDiagnostic(const store::Reader& reader, const std::string& prefix) {
  const auto diagnostics = rows<store::Diagnostic>(reader);
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [&](const store::Diagnostic& diagnostic) { return diagnostic.message.starts_with(prefix); });
}

struct BiasRun {
  double true_share = -1;
  double sampled_share = -1;
};

BiasRun runComputeThenSleep(const fs::path& store, const std::string& reader_choice) {
  ProgramOptions options;
  options.env["TORCHSCOPE_SAMPLE_READER"] = reader_choice;
  options.env["TORCHSCOPE_SAMPLE_HZ"] = "500";
  options.env["TORCHSCOPE_SAMPLE_BUDGET"] = "0";  // the reader's accuracy, at the rate asked
  const ProgramOutcome job =
      runUnderTorchscope(store, {TORCHSCOPE_PYTHON, scriptPath("sampled_pure_python.py").string(), "3"}, options);
  EXPECT_EQ(job.exit_code, 0) << job.err;
  BiasRun run;
  std::smatch match;
  const std::regex printed("compute share ([0-9.]+)");
  if (std::regex_search(job.out, match, printed)) run.true_share = std::stod(match[1]);
  auto reader = openStore(store);
  EXPECT_TRUE(reader);
  if (!reader) return run;
  const auto steps = rows<store::Step>(*reader);
  EXPECT_FALSE(steps.empty());
  if (steps.empty()) return run;
  run.sampled_share =
      shareOf(*reader, steps.front().tid, [](const store::StackFrame& frame) { return frame.function == "compute"; });
  const std::string told = reader_choice == "gil"
                               ? "stack sampler: stacks read with the GIL (TORCHSCOPE_SAMPLE_READER=gil)"
                               : "stack sampler: stacks read without the GIL";
  EXPECT_TRUE(hasDiagnostic(*reader, told)) << told;
  return run;
}

// About 2 ms of pure Python then 3 ms of sleep: the GIL walk credits compute() with almost nothing (the thread keeps
// the GIL until it sleeps); the direct reader with about its true share, which the job measures itself. The
// tolerance holds on a loaded machine, where the sampler's thread wakes later while the job's thread computes: 0.77 to
// 0.8 of the true share at a load of 2 to 4, 0.5 beside a clean-clone CI and a job sampled at 1,000 Hz; the GIL walk
// gives at most a tenth of it.
TEST(StackSamplerReader, PurePythonComputeGetsItsTrueShareWithoutTheGil) {
  const TempDir scratch;
  const BiasRun direct = runComputeThenSleep(scratch.path() / "direct.db", "direct");
  const BiasRun gil = runComputeThenSleep(scratch.path() / "gil.db", "gil");
  ASSERT_GT(direct.true_share, 0.1);
  ASSERT_GT(gil.true_share, 0.1);
  EXPECT_GT(direct.sampled_share, 0.4 * direct.true_share) << "true share " << direct.true_share;
  EXPECT_LT(direct.sampled_share, direct.true_share + 0.1) << "true share " << direct.true_share;
  EXPECT_LT(gil.sampled_share, 0.25 * gil.true_share) << "true share " << gil.true_share;
  std::cout << "compute share: true " << direct.true_share << ", sampled without the GIL " << direct.sampled_share
            << "; true " << gil.true_share << ", sampled with the GIL " << gil.sampled_share << "\n";
}

// Two forked workers whose __getitem__ computes in pure Python, kept busy by a main loop that does nothing else:
// each worker's store credits most of its main thread's time to the __getitem__ line (over 0.4 under load).
TEST(StackSamplerReader, DataLoaderWorkersAreSeenAtTheirGetitemLine) {
  const TempDir scratch;
  const std::string script = "sampled_dataloader.py";
  ProgramOptions options;
  options.env["TORCHSCOPE_SAMPLE_BUDGET"] = "0";  // the reader's view of the workers, at 100 samples a second
  const ProgramOutcome job =
      runUnderTorchscope(scratch.path() / "run.db", {TORCHSCOPE_PYTHON, scriptPath(script).string(), "200"}, options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  const int getitem = scriptLine(script, "getitem");
  int workers = 0;
  for (const auto& entry : fs::directory_iterator(scratch.path())) {
    const std::string name = entry.path().filename().string();
    if (name == "run.db" || !name.starts_with("run.") || !name.ends_with(".db")) continue;
    auto worker = openStore(entry.path());
    ASSERT_TRUE(worker);
    const auto threads = rows<store::Thread>(*worker);
    const auto main = std::find_if(threads.begin(), threads.end(),
                                   [](const store::Thread& thread) { return thread.tid == thread.pid; });
    ASSERT_NE(main, threads.end()) << name;
    const double share = shareOf(*worker, main->tid, [&](const store::StackFrame& frame) {
      return frame.line == getitem && frame.file.ends_with(script);
    });
    // 0.54 to 0.77 here alone, 0.57 to 0.69 beside another sampled job, once 0.49 in a clean-clone CI at -j2 (under
    // load the sampler's wake-up waits for the core the worker frees at its queue, docs/performance.md, *Reading
    // without the GIL*); the GIL walk gives 0.11 to 0.36, so 0.4 still tells the readers apart.
    EXPECT_GT(share, 0.4) << name;
    std::cout << name << ": __getitem__ line " << share << " of the worker's sampled time\n";
    ++workers;
  }
  EXPECT_EQ(workers, 2);
}

// Every tick read both ways with the GIL held: the same frames give the same stack ids (the same frames, lines and
// outermost-first interning), on an eager job with threads and on a torch.compile job (Dynamo's frames).
TEST(StackSamplerReader, BothReadersGiveTheSameStacks) {
  const TempDir scratch;
  ProgramOptions options;
  options.env["TORCHSCOPE_SAMPLE_READER"] = "compare";
  options.env["TORCHSCOPE_SAMPLE_HZ"] = "300";
  options.env["TORCHSCOPE_SAMPLE_BUDGET"] = "0";
  const std::vector<std::vector<std::string>> jobs = {
      {TORCHSCOPE_PYTHON, scriptPath("sampled_hot_line.py").string(), "15", "threads"},
      {TORCHSCOPE_PYTHON, scriptPath("sampled_compiled.py").string(), "40"}};
  int index = 0;
  for (const auto& argv : jobs) {
    const fs::path store = scratch.path() / ("run" + std::to_string(index++) + ".db");
    const ProgramOutcome job = runUnderTorchscope(store, argv, options);
    ASSERT_EQ(job.exit_code, 0) << job.err;
    auto reader = openStore(store);
    ASSERT_TRUE(reader);
    std::string compared;
    for (const auto& diagnostic : rows<store::Diagnostic>(*reader)) {
      if (diagnostic.message.starts_with("stack sampler compare: ")) compared = diagnostic.message;
    }
    std::smatch match;
    const std::regex counts("compare: ([0-9]+) thread samples read both ways, ([0-9]+) differed");
    ASSERT_TRUE(std::regex_search(compared, match, counts)) << "no comparison in " << store;
    EXPECT_GT(std::stoll(match[1]), 200) << compared;
    EXPECT_EQ(std::stoll(match[2]), 0) << compared;
  }
}

}  // namespace
}  // namespace torchscope::testing
