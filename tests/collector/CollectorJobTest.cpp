// End-to-end collector tests: real jobs with real torch.compile on CPU, checked in their stores.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "JobScripts.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/UserCode.h"
#include "torchscope/testing/StoreRows.h"
#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::testing {
namespace {

namespace fs = std::filesystem;

// `torchscope run -o <store> -- python <script> args...`
ProgramOutcome runScript(const fs::path& store, const std::string& script, std::vector<std::string> args = {},
                         const std::string& python = TORCHSCOPE_PYTHON, const ProgramOptions& options = {}) {
  std::vector<std::string> job = {python, scriptPath(script).string()};
  job.insert(job.end(), args.begin(), args.end());
  return runUnderTorchscope(store, job, options);
}

// A script run under `torchscope run` into a store of its own, and that store opened: where most tests begin.
struct RecordedScript {
  explicit RecordedScript(const std::string& script)
      : path(scratch.path() / "run.db"), job(runScript(path, script)), reader(openStore(path)) {}
  // Whether the job exited 0 and its store opened, with the job's stderr when not.
  ::testing::AssertionResult recorded() const {
    if (job.exit_code != 0) return ::testing::AssertionFailure() << "the job exited " << job.exit_code << ": " << job.err;
    if (!reader) return ::testing::AssertionFailure() << "no store at " << path;
    return ::testing::AssertionSuccess();
  }
  const TempDir scratch;
  const fs::path path;  // the store
  const ProgramOutcome job;
  const std::unique_ptr<store::Reader> reader;
};

ProgramOutcome runPlain(const std::string& script) {
  ProgramOptions options;
  options.env["LD_PRELOAD"] = "";
  return runProgram({TORCHSCOPE_PYTHON, scriptPath(script).string()}, options);
}

// The plain LD_PRELOAD path: the collector preloaded into a job that writes `store`, without the
// summary line on stderr.
ProgramOptions preloaded(const fs::path& store) {
  ProgramOptions options;
  options.env["LD_PRELOAD"] = collectorLibrary().string();
  options.env["TORCHSCOPE_OUTPUT"] = store.string();
  options.env["TORCHSCOPE_SUMMARY"] = "0";
  return options;
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
  const TempDir scratch;
  const fs::path& dir = scratch.path();
  ProgramOptions options;
  options.env["LD_PRELOAD"] = collectorLibrary().string();
  options.env["TORCHSCOPE_OUTPUT"] = (dir / "run.db").string();
  const ProgramOutcome job = runProgram({TORCHSCOPE_PYTHON, scriptPath("data_dependent_if.py").string()}, options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, "done\n");
  auto reader = openStore(dir / "run.db");
  ASSERT_TRUE(reader);
  const auto breaks = rows<store::GraphBreak>(*reader);
  ASSERT_EQ(breaks.size(), 1u);
  EXPECT_EQ(breaks[0].break_type, "Data-dependent branching");
  EXPECT_EQ(breaks[0].file, scriptPath("data_dependent_if.py").string());
  EXPECT_EQ(breaks[0].line, scriptLine("data_dependent_if.py", "break"));
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
  const RecordedScript run("item_in_forward.py");
  ASSERT_TRUE(run.recorded());
  const auto breaks = rows<store::GraphBreak>(*run.reader);
  ASSERT_GE(breaks.size(), 1u);
  EXPECT_NE(breaks[0].break_type.find("Tensor.item()"), std::string::npos) << breaks[0].break_type;
  EXPECT_EQ(breaks[0].file, scriptPath("item_in_forward.py").string());
  EXPECT_EQ(breaks[0].line, scriptLine("item_in_forward.py", "break"));
  EXPECT_NE(breaks[0].hints.find("capture_scalar_outputs"), std::string::npos);
}

TEST(CollectorJob, ChangingBatchSizesRecompileAsDynamicShape) {
  const RecordedScript run("batch_size_recompile.py");
  ASSERT_TRUE(run.recorded());
  const auto recompiles = rows<store::Recompile>(*run.reader);
  ASSERT_EQ(recompiles.size(), 2u);
  for (const auto& recompile : recompiles) {
    EXPECT_EQ(recompile.cause, "dynamic-shape") << recompile.guard_failures;
    EXPECT_EQ(recompile.co_name, "forward");
    EXPECT_EQ(recompile.co_filename, scriptPath("batch_size_recompile.py").string());
    EXPECT_EQ(recompile.co_firstlineno, scriptLine("batch_size_recompile.py", "frame"));
    EXPECT_NE(recompile.guard_failures.find("size mismatch"), std::string::npos);
    EXPECT_FALSE(recompile.limit_hit);
  }
  EXPECT_EQ(recompiles[0].frame_compile_id, 1);
  EXPECT_EQ(recompiles[1].frame_compile_id, 2);
  EXPECT_TRUE(rows<store::GraphBreak>(*run.reader).empty());
}

TEST(CollectorJob, SchedulerLrRecompilesAsPythonScalarAndDynamoSeesTheSameGraphs) {
  const TempDir scratch;
  const fs::path& dir = scratch.path();
  const ProgramOutcome plain = runPlain("lr_scheduler_recompile.py");
  const ProgramOutcome traced = runScript(dir / "run.db", "lr_scheduler_recompile.py");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  // The script prints Dynamo's own counters: graphs, breaks and frames are the same.
  EXPECT_EQ(traced.out, plain.out);
  auto reader = openStore(dir / "run.db");
  ASSERT_TRUE(reader);
  const std::string script = scriptPath("lr_scheduler_recompile.py").string();
  const auto recompiles = rows<store::Recompile>(*reader);
  ASSERT_GE(recompiles.size(), 1u);
  for (const auto& recompile : recompiles) {
    EXPECT_EQ(recompile.cause, "python-scalar") << recompile.guard_failures;
    EXPECT_EQ(recompile.cause_detail, "self.param_groups[0]['lr']");
    // torch recompiles SGD.step in torch/optim; the user's lines are the optimizer and the compile call.
    EXPECT_EQ(recompile.value_kind, "optimizer");
    EXPECT_EQ(recompile.value_file, script);
    EXPECT_EQ(recompile.value_line, scriptLine("lr_scheduler_recompile.py", "optimizer"));
    EXPECT_EQ(recompile.entry_file, script);
    EXPECT_EQ(recompile.entry_line, scriptLine("lr_scheduler_recompile.py", "frame"));
    EXPECT_NE(recompile.stack.find(script), std::string::npos);
  }
  const auto compiles = rows<store::Compile>(*reader);
  const auto user_frame = std::find_if(compiles.begin(), compiles.end(), [](const store::Compile& compile) {
    return compile.co_name == "optimizer_step";
  });
  ASSERT_NE(user_frame, compiles.end());
  EXPECT_EQ(user_frame->co_filename, script);
  EXPECT_EQ(user_frame->co_firstlineno, scriptLine("lr_scheduler_recompile.py", "frame"));
  // torch's own breaks (the scheduler's wrapper, torch.optim's `_use_grad`) sit at the user's step call, with
  // torch's line kept as the innermost frame of the stack.
  const auto breaks = rows<store::GraphBreak>(*reader);
  ASSERT_EQ(breaks.size(), 2u);
  for (const auto& graph_break : breaks) {
    EXPECT_EQ(graph_break.file, script);
    EXPECT_EQ(graph_break.line, scriptLine("lr_scheduler_recompile.py", "step"));
    EXPECT_EQ(graph_break.function, "optimizer_step");
    EXPECT_EQ(graph_break.gb_id.rfind("GB", 0), 0u) << graph_break.gb_id;
  }
  const auto designed = std::find_if(breaks.begin(), breaks.end(), [](const store::GraphBreak& graph_break) {
    return graph_break.break_type == "Call to `torch._dynamo.graph_break()`";
  });
  ASSERT_NE(designed, breaks.end());
  const auto stack = store::parseStack(designed->stack);
  ASSERT_FALSE(stack.empty());
  EXPECT_TRUE(stack.back().file.ends_with("torch/optim/optimizer.py")) << designed->stack;
  EXPECT_EQ(stack.back().function, "_use_grad");
  // Three iterations are three steps: the compiled step's region ends each one.
  const auto steps = rows<store::Step>(*reader);
  ASSERT_EQ(steps.size(), 3u);
  for (const auto& step : steps) EXPECT_EQ(step.source, "optimizer");
}

TEST(CollectorJob, RecompileLimitHitIsRecorded) {
  const RecordedScript run("recompile_limit.py");
  ASSERT_TRUE(run.recorded());
  const auto recompiles = rows<store::Recompile>(*run.reader);
  ASSERT_GE(recompiles.size(), 2u);
  EXPECT_FALSE(recompiles.front().limit_hit);
  EXPECT_TRUE(recompiles.back().limit_hit);
  for (const auto& recompile : recompiles) {
    EXPECT_EQ(recompile.cause, "python-scalar") << recompile.guard_failures;
    EXPECT_EQ(recompile.cause_detail, "factor");
    EXPECT_EQ(recompile.co_filename, scriptPath("recompile_limit.py").string());
    EXPECT_EQ(recompile.co_firstlineno, scriptLine("recompile_limit.py", "frame"));
    EXPECT_EQ(recompile.value_kind, "argument");
    EXPECT_EQ(recompile.value_line, scriptLine("recompile_limit.py", "call"));
  }
}

struct ExpectedRecompile {
  std::string tag;  // the MARK of the line the user changes
  std::string cause;
  std::string detail;
};

// Each cause class in its own compiled function: the class, what changed, and the user's lines.
TEST(CollectorJob, RecompileCausesNameTheLineToChange) {
  const RecordedScript run("recompile_causes.py");
  ASSERT_TRUE(run.recorded());
  const std::string script = scriptPath("recompile_causes.py").string();
  const auto line = [](const std::string& tag) { return scriptLine("recompile_causes.py", tag); };
  const auto recompiles = rows<store::Recompile>(*run.reader);
  // The line a user calls the compiled code from: the innermost frame of the stack in the script.
  const auto call_line = [&](const store::Recompile& recompile) -> std::int64_t {
    const auto stack = store::parseStack(recompile.stack);
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      if (it->file == script) return it->line;
    }
    return -1;
  };
  const std::vector<ExpectedRecompile> expected = {
      {"call-shape", "dynamic-shape", "x"},    {"call-counter", "python-scalar", "self.calls"},
      {"call-item", "python-scalar", "scale"}, {"dtype", "dtype-device", "dtype"},
      {"device", "dtype-device", "device"},    {"grad", "global-state", "grad_mode"},
      {"autocast", "global-state", "autocast"}, {"training", "training-flag", "self._modules['dropout']"},
      {"identity", "type-or-identity", "type"}};
  ASSERT_EQ(recompiles.size(), expected.size());
  for (const auto& want : expected) {
    const auto found = std::find_if(recompiles.begin(), recompiles.end(),
                                    [&](const store::Recompile& recompile) { return call_line(recompile) == line(want.tag); });
    ASSERT_NE(found, recompiles.end()) << "no recompile called from the line marked " << want.tag;
    EXPECT_EQ(found->cause, want.cause) << want.tag << ": " << found->guard_failures;
    EXPECT_EQ(found->cause_detail, want.detail) << want.tag;
    EXPECT_EQ(found->entry_file, script) << want.tag;
  }
  const auto at = [&](const std::string& tag) {
    return *std::find_if(recompiles.begin(), recompiles.end(),
                         [&](const store::Recompile& recompile) { return call_line(recompile) == line(tag); });
  };
  EXPECT_EQ(at("call-shape").entry_line, line("entry-shape"));
  EXPECT_EQ(at("grad").entry_line, line("entry-grad"));
  const store::Recompile counter = at("call-counter");
  EXPECT_EQ(counter.entry_line, line("entry-counter"));
  EXPECT_EQ(counter.value_kind, "attribute");
  EXPECT_EQ(counter.value_line, line("attribute"));
  const store::Recompile item = at("call-item");
  EXPECT_EQ(item.value_kind, "item");
  EXPECT_EQ(item.value_file, script);
  EXPECT_EQ(item.value_line, line("item"));
  auto attributes = run.reader->load<store::RunAttribute>();
  ASSERT_TRUE(attributes.ok());
  const store::CodeRoots roots = store::codeRootsFrom(*attributes);
  EXPECT_TRUE(roots.isUserFile(script));
  // The stack keeps torch's frames, which the recorded roots do not count as the user's.
  const auto grad_stack = store::parseStack(at("grad").stack);
  const auto torch_frame = std::find_if(grad_stack.begin(), grad_stack.end(), [](const store::SourceFrame& frame) {
    return frame.file.find("/torch/_dynamo/") != std::string::npos;
  });
  ASSERT_NE(torch_frame, grad_stack.end()) << at("grad").stack;
  EXPECT_FALSE(roots.isUserFile(torch_frame->file));
}

// Both breaks torch logs at a comprehension it cannot resume in are one finding there, naming the branch that
// caused them; every finding names a line of the script.
TEST(CollectorJob, ABreakInsideAComprehensionFallsBackToEagerThere) {
  const RecordedScript run("comprehension_break.py");
  ASSERT_TRUE(run.recorded());
  const std::string script = scriptPath("comprehension_break.py").string();
  int skipped = 0;
  for (const auto& graph_break : rows<store::GraphBreak>(*run.reader)) {
    EXPECT_EQ(graph_break.break_type.find("Failed to handle"), std::string::npos) << graph_break.break_type;
    if (!graph_break.frame_skipped) continue;
    ++skipped;
    EXPECT_EQ(graph_break.line, scriptLine("comprehension_break.py", "comprehension"));
  }
  EXPECT_EQ(skipped, 2);
  const ProgramOutcome advise =
      runProgram({torchscopeExecutable().string(), "advise", run.path.string(), "--format", "json"});
  ASSERT_EQ(advise.exit_code, 0) << advise.err;
  const auto report = nlohmann::json::parse(advise.out);
  int fallbacks = 0;
  for (const auto& finding : report["findings"]) {
    const auto& location = finding["location"];
    if (!location["file"].get<std::string>().empty()) {
      EXPECT_EQ(location["file"], script) << finding.dump(2);
    }
    if (finding["rule"] != "graph-break/eager-fallback") continue;
    ++fallbacks;
    EXPECT_EQ(location["line"], scriptLine("comprehension_break.py", "comprehension"));
    EXPECT_EQ(finding["count"], 2);
    EXPECT_EQ(finding["evidence"]["caused_by"]["line"], scriptLine("comprehension_break.py", "branch"));
  }
  EXPECT_EQ(fallbacks, 1) << advise.out;
}

TEST(CollectorJob, CleanTrainingKeepsOutputAndExitCodeAndHasNoBreaksOrRecompiles) {
  const TempDir scratch;
  const fs::path& dir = scratch.path();
  const ProgramOutcome plain = runPlain("clean_training.py");
  const ProgramOutcome traced = runScript(dir / "run.db", "clean_training.py");
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
  const RecordedScript run("dataloader_fork.py");
  ASSERT_TRUE(run.recorded());
  EXPECT_EQ(run.job.out, "done\n");
  EXPECT_EQ(rows<store::Step>(*run.reader).size(), 16u);  // 2 epochs x 8 batches, step 0 opened by zero_grad()
  const auto processes = rows<store::Process>(*run.reader);
  ASSERT_EQ(processes.size(), 1u);
  const std::int64_t main_pid = processes[0].pid;
  int workers = 0;
  for (const auto& entry : fs::directory_iterator(run.scratch.path())) {
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
  if (!fs::exists(python) || runProgram({python, "-c", "import torch"}).exit_code == 0) {
    GTEST_SKIP() << "needs a system python3 without torch";
  }
  const TempDir scratch;
  const fs::path& dir = scratch.path();
  const ProgramOutcome job = runScript(dir / "run.db", "markers_without_torch.py", {}, python);
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

TEST(CollectorJob, TheBridgeMarksStepsThroughTheCollectorsBuiltins) {
  const TempDir scratch;
  ProgramOptions options;
  options.env["TORCHSCOPE_WINDOW_STEPS"] = "1:3";
  const ProgramOutcome job = runScript(scratch.path() / "run.db", "step_builtins.py", {}, TORCHSCOPE_PYTHON, options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  // Builtins, not ctypes calls; stored only for the steps the window keeps; a step before the one the bridge asked
  // to follow up, or outside the window when it did not ask for those, is recorded all the same but answers None;
  // zero_grad() and backward() answer False once markers took over (the bridge unhooks them); bad arguments mark
  // nothing and raise nothing.
  EXPECT_EQ(job.out,
            "kind builtin_function_or_method\nfirst None\n"
            "indices [0, 1, 2, 3] stored [False, True, True, False]\ncontiguous True\n"
            "not due None None due 6 next 7\noutside the window None\nno longer marking False False\n"
            "bad None None None None\n");
  auto reader = openStore(scratch.path() / "run.db");
  ASSERT_TRUE(reader);
  const auto steps = rows<store::Step>(*reader);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].index, 1);
  EXPECT_EQ(steps[1].index, 2);
  EXPECT_EQ(steps[0].end_ns, steps[1].start_ns);
  EXPECT_LT(steps[0].start_ns, steps[0].end_ns);
  EXPECT_EQ(steps[0].source, "marker");
  EXPECT_GT(steps[1].tid, 0);
}

TEST(CollectorJob, SigtermEndsTheJobBySignalAndTheStoreIsClosed) {
  const TempDir scratch;
  const fs::path& dir = scratch.path();
  ProgramOptions options;
  options.terminate_after_line_ms = 300;
  const ProgramOutcome job = runScript(dir / "run.db", "markers_without_torch.py", {"wait"}, TORCHSCOPE_PYTHON,
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
  const TempDir scratch;
  const fs::path& dir = scratch.path();
  {
    std::ofstream site(dir / "sitecustomize.py");
    site << "import sys\nprint('environment sitecustomize ran', file=sys.stderr)\n";
  }
  ProgramOptions options = preloaded(dir / "run.db");
  options.env["PYTHONPATH"] = dir.string();
  const ProgramOutcome job = runProgram(
      {TORCHSCOPE_PYTHON, "-c", "import os, torchscope_bridge; print(os.environ['PYTHONPATH'])"}, options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, dir.string() + "\n");
  EXPECT_EQ(job.err, "environment sitecustomize ran\n");
  EXPECT_TRUE(fs::exists(dir / "run.db"));
}

// Runtime fixes patch torch once the job imports it, not at interpreter start: Inductor checks the
// CPU's vector units in `python -c` children, and with the fixes applied at start each of them
// imported torch, a dozen CPU-seconds more for every fixed variant than for the baseline. The bridge
// knows them only as the torch-import hook `torchscope fix` names; the hook's mapping becomes attributes.
TEST(CollectorJob, RuntimeFixesWaitForTheJobsImportOfTorch) {
  const TempDir scratch;
  const fs::path& dir = scratch.path();
  ProgramOptions options = preloaded(dir / "plain.db");
  options.env["TORCHSCOPE_FIXES"] = "tensor-lr";
  options.env["TORCHSCOPE_TORCH_IMPORT_HOOKS"] = "torchscope_compiler.runtime:on_torch_import";
  options.env["PYTHONPATH"] = std::string(TORCHSCOPE_SOURCE_DIR) + "/compiler/python";
  const ProgramOutcome plain =
      runProgram({TORCHSCOPE_PYTHON, "-c", "import sys; print('torch' in sys.modules)"}, options);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, "False\n");
  options.env["TORCHSCOPE_OUTPUT"] = (dir / "job.db").string();
  const ProgramOutcome job = runProgram(
      {TORCHSCOPE_PYTHON, "-c",
       "import torch\n"
       "optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)\n"
       "print(type(optimizer.param_groups[0]['lr']).__name__)"},
      options);
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, "Tensor\n");
  auto reader = store::Reader::open((dir / "job.db").string());
  ASSERT_TRUE(reader.ok());
  auto attributes = (*reader)->load<store::RunAttribute>();
  ASSERT_TRUE(attributes.ok());
  std::map<std::string, std::string> values;
  for (const auto& attribute : *attributes) values[attribute.key] = attribute.value;
  EXPECT_EQ(values["runtime_fixes"], "tensor-lr");
}

// torch.compiler.is_compiling() is True on every thread while any thread compiles (torch 2.13): the
// steps of a thread that trains while another one compiles must all be recorded.
TEST(CollectorJob, StepsOfAThreadRunningWhileAnotherCompilesAreRecorded) {
  const RecordedScript run("steps_while_compiling.py");
  ASSERT_TRUE(run.recorded());
  const auto steps = rows<store::Step>(*run.reader);
  // Four iterations: the first zero_grad() opens step 0, each optimizer.step() closes one.
  ASSERT_EQ(steps.size(), 4u) << run.job.out;
  for (const auto& step : steps) EXPECT_EQ(step.source, "optimizer");
  EXPECT_EQ(rows<store::Compile>(*run.reader).size(), 1u);
}

// torch builds a structured-trace event's payload (printed graphs, generated code) for whoever
// listens: with the collector the only listener, only the events it reads are built; with another
// handler (TORCH_TRACE, the user's own) every event is.
TEST(CollectorJob, OnlyTheTraceEventsTheCollectorReadsAreBuilt) {
  const TempDir scratch;
  const ProgramOutcome job = runProgram(
      {TORCHSCOPE_PYTHON, "-c",
       "import logging, torch\n"
       "from torch._logging import trace_structured, _internal\n"
       "built = []\n"
       "def emit(name):\n"
       "    trace_structured('artifact', lambda: {'name': name, 'encoding': 'string'},\n"
       "                     payload_fn=lambda: built.append(name) or 'x')\n"
       "emit('dynamo_start')  # torch's own handler (TORCH_TRACE unset) leaves at the first event\n"
       "built.clear()\n"
       "emit('inductor_output_code'); emit('recompile_reasons')\n"
       "_internal.trace_log.addHandler(logging.NullHandler())\n"
       "emit('aot_forward_graph')\n"
       "print(built)"},
      preloaded(scratch.path() / "run.db"));
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, "['recompile_reasons', 'aot_forward_graph']\n");
}

TEST(CollectorJob, RunRejectsAMissingOutputDirectory) {
  const ProgramOutcome job = runUnderTorchscope("/nonexistent/dir/run.db", {"true"});
  EXPECT_EQ(job.exit_code, 2);
  EXPECT_NE(job.err.find("directory does not exist"), std::string::npos);
}

}  // namespace
}  // namespace torchscope::testing
