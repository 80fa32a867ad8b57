// End-to-end collector tests: real jobs with real torch.compile on CPU, checked in their stores.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "JobRunner.h"
#include "torchscope/store/Reader.h"

namespace torchscope::test {
namespace {

namespace fs = std::filesystem;
using store::Reader;

std::unique_ptr<Reader> openStore(const fs::path& path) {
  auto reader = Reader::open(path.string());
  EXPECT_TRUE(reader.ok()) << path << ": " << (reader.ok() ? "" : reader.error().message);
  return reader.ok() ? std::move(reader.value()) : nullptr;
}

template <class T>
std::vector<T> rows(const Reader& reader) {
  auto loaded = reader.load<T>();
  EXPECT_TRUE(loaded.ok());
  return loaded.ok() ? loaded.value() : std::vector<T>{};
}

// `torchscope run -o <dir>/run.db -- python <script> args...`
JobResult runUnderTorchscope(const fs::path& store, const std::string& script, std::vector<std::string> args = {},
                             const std::string& python = TORCHSCOPE_PYTHON, JobOptions options = {}) {
  std::vector<std::string> argv = {torchscopeExecutable().string(), "run", "-o", store.string(), "--", python,
                                   scriptPath(script).string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return runJob(argv, options);
}

JobResult runPlain(const std::string& script) {
  JobOptions options;
  options.env["LD_PRELOAD"] = "";
  return runJob({TORCHSCOPE_PYTHON, scriptPath(script).string()}, options);
}

// Output lines that torchscope itself adds to the job's stderr.
std::string withoutTorchscopeLines(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::string kept;
  while (std::getline(in, line)) {
    if (line.rfind("torchscope: ", 0) != 0) kept += line + "\n";
  }
  return kept;
}

TEST(CollectorJob, PlainLdPreloadRecordsADataDependentBranchAtTheUserLine) {
  const fs::path dir = freshDirectory("ld-preload");
  JobOptions options;
  options.env["LD_PRELOAD"] = collectorLibrary().string();
  options.env["TORCHSCOPE_OUTPUT"] = (dir / "run.db").string();
  const JobResult job = runJob({TORCHSCOPE_PYTHON, scriptPath("data_dependent_if.py").string()}, options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, "done\n");
  auto reader = openStore(dir / "run.db");
  ASSERT_TRUE(reader);
  const auto breaks = rows<store::GraphBreak>(*reader);
  ASSERT_EQ(breaks.size(), 1u);
  EXPECT_EQ(breaks[0].break_type, "Data-dependent branching");
  EXPECT_EQ(breaks[0].file, scriptPath("data_dependent_if.py").string());
  EXPECT_EQ(breaks[0].line, markedLine("data_dependent_if.py", "break"));
  EXPECT_EQ(breaks[0].function, "forward");
  EXPECT_NE(breaks[0].user_stack.find("data_dependent_if.py"), std::string::npos);
  EXPECT_EQ(breaks[0].user_stack.find("/torch/"), std::string::npos);
  EXPECT_EQ(breaks[0].frame_id, 0);
  const auto compiles = rows<store::Compile>(*reader);
  ASSERT_GE(compiles.size(), 2u);  // the function and its resume function after the break
  EXPECT_EQ(compiles[0].co_name, "forward");
  EXPECT_GT(compiles[0].dynamo_ns, 0);
  EXPECT_EQ(compiles[0].status, "ok");
  EXPECT_TRUE(rows<store::Recompile>(*reader).empty());
}

TEST(CollectorJob, ItemInForwardIsABreakAtThatLine) {
  const fs::path dir = freshDirectory("item");
  const JobResult job = runUnderTorchscope(dir / "run.db", "item_in_forward.py");
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto reader = openStore(dir / "run.db");
  ASSERT_TRUE(reader);
  const auto breaks = rows<store::GraphBreak>(*reader);
  ASSERT_GE(breaks.size(), 1u);
  EXPECT_NE(breaks[0].break_type.find("Tensor.item()"), std::string::npos) << breaks[0].break_type;
  EXPECT_EQ(breaks[0].file, scriptPath("item_in_forward.py").string());
  EXPECT_EQ(breaks[0].line, markedLine("item_in_forward.py", "break"));
  EXPECT_NE(breaks[0].hints.find("capture_scalar_outputs"), std::string::npos);
}

TEST(CollectorJob, ChangingBatchSizesRecompileAsDynamicShape) {
  const fs::path dir = freshDirectory("batch");
  const JobResult job = runUnderTorchscope(dir / "run.db", "batch_size_recompile.py");
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto reader = openStore(dir / "run.db");
  ASSERT_TRUE(reader);
  const auto recompiles = rows<store::Recompile>(*reader);
  ASSERT_EQ(recompiles.size(), 2u);
  for (const auto& recompile : recompiles) {
    EXPECT_EQ(recompile.cause, "dynamic-shape") << recompile.guard_failures;
    EXPECT_EQ(recompile.co_name, "forward");
    EXPECT_EQ(recompile.co_filename, scriptPath("batch_size_recompile.py").string());
    EXPECT_EQ(recompile.co_firstlineno, markedLine("batch_size_recompile.py", "frame"));
    EXPECT_NE(recompile.guard_failures.find("size mismatch"), std::string::npos);
    EXPECT_FALSE(recompile.limit_hit);
  }
  EXPECT_EQ(recompiles[0].frame_compile_id, 1);
  EXPECT_EQ(recompiles[1].frame_compile_id, 2);
  EXPECT_TRUE(rows<store::GraphBreak>(*reader).empty());
}

TEST(CollectorJob, SchedulerLrRecompilesAsPythonScalarAndDynamoSeesTheSameGraphs) {
  const fs::path dir = freshDirectory("lr");
  const JobResult plain = runPlain("lr_scheduler_recompile.py");
  const JobResult traced = runUnderTorchscope(dir / "run.db", "lr_scheduler_recompile.py");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  // The script prints Dynamo's own counters: graphs, breaks and frames are the same.
  EXPECT_EQ(traced.out, plain.out);
  auto reader = openStore(dir / "run.db");
  ASSERT_TRUE(reader);
  const auto recompiles = rows<store::Recompile>(*reader);
  ASSERT_GE(recompiles.size(), 1u);
  for (const auto& recompile : recompiles) {
    EXPECT_EQ(recompile.cause, "python-scalar") << recompile.guard_failures;
    EXPECT_NE(recompile.guard_failures.find("['lr']"), std::string::npos);
  }
  const auto compiles = rows<store::Compile>(*reader);
  const auto user_frame = std::find_if(compiles.begin(), compiles.end(), [](const store::Compile& compile) {
    return compile.co_name == "optimizer_step";
  });
  ASSERT_NE(user_frame, compiles.end());
  EXPECT_EQ(user_frame->co_filename, scriptPath("lr_scheduler_recompile.py").string());
  EXPECT_EQ(user_frame->co_firstlineno, markedLine("lr_scheduler_recompile.py", "frame"));
  const auto steps = rows<store::Step>(*reader);
  ASSERT_EQ(steps.size(), 2u);  // three zero_grad() calls bound two steps
  EXPECT_EQ(steps[0].source, "zero_grad");
}

TEST(CollectorJob, RecompileLimitHitIsRecorded) {
  const fs::path dir = freshDirectory("limit");
  const JobResult job = runUnderTorchscope(dir / "run.db", "recompile_limit.py");
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto reader = openStore(dir / "run.db");
  ASSERT_TRUE(reader);
  const auto recompiles = rows<store::Recompile>(*reader);
  ASSERT_GE(recompiles.size(), 2u);
  EXPECT_FALSE(recompiles.front().limit_hit);
  EXPECT_TRUE(recompiles.back().limit_hit);
  for (const auto& recompile : recompiles) {
    EXPECT_EQ(recompile.cause, "python-scalar") << recompile.guard_failures;
    EXPECT_EQ(recompile.co_filename, scriptPath("recompile_limit.py").string());
    EXPECT_EQ(recompile.co_firstlineno, markedLine("recompile_limit.py", "frame"));
  }
}

TEST(CollectorJob, CleanTrainingKeepsOutputAndExitCodeAndHasNoBreaksOrRecompiles) {
  const fs::path dir = freshDirectory("clean");
  const JobResult plain = runPlain("clean_training.py");
  const JobResult traced = runUnderTorchscope(dir / "run.db", "clean_training.py");
  EXPECT_EQ(plain.exit_code, 3);
  EXPECT_EQ(traced.exit_code, 3);
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(withoutTorchscopeLines(traced.err), plain.err);
  EXPECT_NE(traced.err.find("torchscope: store written to " + (dir / "run.db").string()), std::string::npos);
  auto reader = openStore(dir / "run.db");
  ASSERT_TRUE(reader);
  EXPECT_TRUE(rows<store::GraphBreak>(*reader).empty());
  EXPECT_TRUE(rows<store::Recompile>(*reader).empty());
  EXPECT_FALSE(rows<store::Compile>(*reader).empty());
  const auto steps = rows<store::Step>(*reader);
  // Six iterations: the first zero_grad() opens step 0, each optimizer.step() closes one.
  ASSERT_EQ(steps.size(), 6u);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].source, "optimizer");
    EXPECT_EQ(steps[i].index, static_cast<std::int64_t>(i));
    EXPECT_GT(steps[i].end_ns, steps[i].start_ns);
  }
  auto run = reader->run();
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 3);
  EXPECT_EQ(run->torch_version.rfind("2.", 0), 0u) << run->torch_version;
  EXPECT_FALSE(run->python_version.empty());
  EXPECT_NE(run->command_line.find("clean_training.py"), std::string::npos);
  EXPECT_GE(run->end_ns, run->start_ns);
}

TEST(CollectorJob, DataLoaderWorkersForkAndEveryStoreIsConsistent) {
  const fs::path dir = freshDirectory("dataloader");
  const JobResult job = runUnderTorchscope(dir / "run.db", "dataloader_fork.py");
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, "done\n");
  auto reader = openStore(dir / "run.db");
  ASSERT_TRUE(reader);
  EXPECT_EQ(rows<store::Step>(*reader).size(), 16u);  // 2 epochs x 8 batches, step 0 opened by zero_grad()
  const auto processes = rows<store::Process>(*reader);
  ASSERT_EQ(processes.size(), 1u);
  const std::int64_t main_pid = processes[0].pid;
  int workers = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(name.find("-wal"), std::string::npos) << name << " left behind";
    if (name == "run.db") continue;
    auto worker = openStore(entry.path());
    ASSERT_TRUE(worker);
    const auto worker_processes = rows<store::Process>(*worker);
    ASSERT_EQ(worker_processes.size(), 1u);
    EXPECT_EQ(worker_processes[0].parent_pid, main_pid);
    EXPECT_GE(worker_processes[0].end_ns, worker_processes[0].start_ns) << name << " was not closed";
    EXPECT_EQ(name, "run." + std::to_string(worker_processes[0].pid) + ".db");
    ++workers;
  }
  EXPECT_EQ(workers, 4);  // two workers per epoch
}

TEST(CollectorJob, PythonWithoutTorchIsDiagnosedAndMarkersStillCount) {
  const std::string python = "/usr/bin/python3";
  if (!fs::exists(python) || runJob({python, "-c", "import torch"}).exit_code == 0) {
    GTEST_SKIP() << "needs a system python3 without torch";
  }
  const fs::path dir = freshDirectory("no-torch");
  const JobResult job = runUnderTorchscope(dir / "run.db", "markers_without_torch.py", {}, python);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto reader = openStore(dir / "run.db");
  ASSERT_TRUE(reader);
  const auto diagnostics = rows<store::Diagnostic>(*reader);
  EXPECT_TRUE(std::any_of(diagnostics.begin(), diagnostics.end(), [](const store::Diagnostic& diagnostic) {
    return diagnostic.message.find("torch is not installed") != std::string::npos;
  }));
  const auto steps = rows<store::Step>(*reader);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].source, "marker");
}

TEST(CollectorJob, SigtermEndsTheJobBySignalAndTheStoreIsClosed) {
  const fs::path dir = freshDirectory("sigterm");
  JobOptions options;
  options.terminate_after_line_ms = 300;
  const JobResult job = runUnderTorchscope(dir / "run.db", "markers_without_torch.py", {"wait"}, TORCHSCOPE_PYTHON,
                                           options);
  EXPECT_EQ(job.exit_code, 128 + SIGTERM) << job.err;
  auto reader = openStore(dir / "run.db");
  ASSERT_TRUE(reader);
  EXPECT_EQ(rows<store::Step>(*reader).size(), 3u);
  const auto processes = rows<store::Process>(*reader);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_GE(processes[0].end_ns, processes[0].start_ns);
  auto run = reader->run();
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 128 + SIGTERM);
}

TEST(CollectorJob, AnExistingSitecustomizeStillRunsAndPythonpathIsGivenBack) {
  const fs::path dir = freshDirectory("sitecustomize");
  {
    std::ofstream site(dir / "sitecustomize.py");
    site << "import sys\nprint('environment sitecustomize ran', file=sys.stderr)\n";
  }
  JobOptions options;
  options.env["LD_PRELOAD"] = collectorLibrary().string();
  options.env["TORCHSCOPE_OUTPUT"] = (dir / "run.db").string();
  options.env["TORCHSCOPE_SUMMARY"] = "0";
  options.env["PYTHONPATH"] = dir.string();
  const JobResult job = runJob(
      {TORCHSCOPE_PYTHON, "-c", "import os, torchscope_bridge; print(os.environ['PYTHONPATH'])"}, options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, dir.string() + "\n");
  EXPECT_EQ(job.err, "environment sitecustomize ran\n");
  EXPECT_TRUE(fs::exists(dir / "run.db"));
}

TEST(CollectorJob, RunRejectsAMissingOutputDirectory) {
  const JobResult job = runJob({torchscopeExecutable().string(), "run", "-o", "/nonexistent/dir/run.db", "--", "true"});
  EXPECT_EQ(job.exit_code, 2);
  EXPECT_NE(job.err.find("directory does not exist"), std::string::npos);
}

}  // namespace
}  // namespace torchscope::test
