// `torchscope fix` end to end with real torch.compile on CPU, through the built binary.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "FixHarness.h"
#include "torchscope/compiler/Process.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/Writer.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;

// The lr-scheduler script gets tensor-lr: recompiles go to 0 with parity kept; a deliberately
// result-changing fix is rejected by the parity check; --write applies the source form with a backup.
TEST_F(FixEndToEnd, TensorLrAcceptedResultChangingFixRejectedAndWritten) {
  const fs::path script = copyScript("lr_scheduler.py");
  const std::string original = readTextFile(script.string());
  const auto report = fix({"--repetitions", "2", "--fixes", "tensor-lr,test-change-results", "--write", "--",
                           TORCHSCOPE_PYTHON, script.string()});
  ASSERT_TRUE(report.is_object());
  EXPECT_GT(report["baseline"]["recompiles"].get<int>(), 0);
  const auto& tensor_lr = fixNamed(report, "tensor-lr");
  // Whether it is faster is a timing verdict that a loaded 2-core machine can swing; the fix's
  // effect (no recompiles, parity kept) is not.
  const bool accepted = tensor_lr["accepted"].get<bool>();
  if (!accepted) {
    EXPECT_EQ(tensor_lr["reason"].get<std::string>().find("parity"), std::string::npos);
  }
  EXPECT_EQ(tensor_lr["recompiles_after"], 0);
  EXPECT_TRUE(tensor_lr["parity"]["ok"].get<bool>());
  EXPECT_LT(tensor_lr["parity"]["max_rel_diff"].get<double>(), 1e-3);
  // Memory beside time: every variant's peak RSS, and what the fix costs or saves against the baseline.
  EXPECT_GT(report["baseline"]["memory"]["peak_rss_bytes"].get<std::int64_t>(), 50 << 20);
  EXPECT_GT(tensor_lr["memory"]["peak_rss_bytes"].get<std::int64_t>(), 50 << 20);
  EXPECT_EQ(tensor_lr["memory"]["basis"], "host_rss");
  EXPECT_TRUE(tensor_lr["memory"]["increase"].is_number());
  EXPECT_NE(tensor_lr["diff"].get<std::string>().find("torch.tensor(0.05)"), std::string::npos);

  const auto& changing = fixNamed(report, "test-change-results");
  EXPECT_FALSE(changing["accepted"].get<bool>());
  EXPECT_FALSE(changing["parity"]["ok"].get<bool>());
  EXPECT_NE(changing["reason"].get<std::string>().find("parity"), std::string::npos);

  const std::string written = readTextFile(script.string());
  if (accepted) {
    ASSERT_TRUE(report["combined"].is_object());
    EXPECT_EQ(report["combined"]["members"], nlohmann::json::array({"tensor-lr"}));
    EXPECT_NE(written.find("lr=torch.tensor(0.05)"), std::string::npos);
    EXPECT_EQ(readTextFile(script.string() + ".torchscope.bak"), original);
  } else {
    EXPECT_EQ(written, original) << "--write changed a file although no fix was accepted";
  }
}

// Writes a store whose run is `command` and whose findings propose `fixes` (id, impact fraction).
void writeStore(const fs::path& path, const std::string& command, const std::vector<std::pair<std::string, double>>& fixes) {
  auto writer = store::Writer::open(path.string());
  ASSERT_TRUE(writer.ok());
  store::RunInfo run;
  run.command_line = command;
  (*writer)->setRun(run);
  for (const auto& [id, impact] : fixes) {
    store::Finding finding;
    finding.rule = "test/" + id;
    finding.fix_id = id;
    finding.impact_fraction = impact;
    (*writer)->add(finding);
  }
  ASSERT_TRUE((*writer)->close().ok());
}

// `fix RUN_DIR` (the run folder `advise RUN_DIR` reads): its run.db's command line and findings drive the run;
// dynamic shapes bring the recompiles of a dynamic=False script to at most one; without --write no user file
// changes; the results land in the store as fix experiments.
TEST_F(FixEndToEnd, DynamicShapesFromARunFolderLeavesUserFilesAlone) {
  const fs::path script = copyScript("batch_sizes.py");
  const std::string original = readTextFile(script.string());
  const fs::path folder = dir_ / "runs";
  fs::create_directory(folder);
  const fs::path store_path = folder / "run.db";
  writeStore(store_path, std::string(TORCHSCOPE_PYTHON) + " " + script.string(), {{"dynamic-shapes", 0.4}});
  const auto report = fix({"--repetitions", "2", folder.string()});
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["fixes"].size(), 1U);
  const auto& dynamic = report["fixes"][0];
  EXPECT_EQ(dynamic["id"], "dynamic-shapes");
  EXPECT_GT(report["baseline"]["recompiles"].get<int>(), 1);
  EXPECT_LE(dynamic["recompiles_after"].get<int>(), 1);
  EXPECT_TRUE(dynamic["effect"]["shown"].get<bool>()) << dynamic.dump();
  EXPECT_TRUE(dynamic["parity"]["ok"].get<bool>()) << dynamic.dump();
  // Every measure is reported for the fix, wall and CPU time alike, and the verdict names its own.
  for (const char* metric : {"end_to_end_wall", "end_to_end_cpu", "first_step_wall", "first_step_cpu", "compile_wall",
                             "compile_cpu", "steady_step_wall", "steady_step_cpu"}) {
    EXPECT_TRUE(dynamic["metrics"].contains(metric)) << metric << " " << dynamic["metrics"].dump();
  }
  EXPECT_EQ(dynamic["verdict"]["metric"], "end_to_end_cpu");
  EXPECT_EQ(dynamic["runs"], 2);  // at most --repetitions

  EXPECT_EQ(readTextFile(script.string()), original);
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().string().find(".torchscope.bak"), std::string::npos) << entry.path();
  }
  auto reader = store::Reader::open(store_path.string());
  ASSERT_TRUE(reader.ok());
  auto experiments = (*reader)->load<store::FixExperiment>();
  ASSERT_TRUE(experiments.ok());
  ASSERT_FALSE(experiments->empty());
  EXPECT_EQ(experiments->front().fix_id, "dynamic-shapes");
  EXPECT_EQ(experiments->front().repetitions, 2);
}

// Chosen from the profile run's findings, a fix names the user's line: the fix launcher wraps
// torch.compile and the optimizer's constructor, and its frame must not pass for the user's call
// (the optimizer whose float lr recompiles the step is created at line 6).
// The profile run's store names the user's command, not the launcher `fix` wraps it in.
TEST_F(FixEndToEnd, FixesChosenFromFindingsNameTheUsersLine) {
  const fs::path script = copyScript("lr_scheduler.py");
  const auto report =
      fix({"--max-fixes", "1", "--repetitions", "2", "--keep-temp", "--", TORCHSCOPE_PYTHON, script.string()});
  ASSERT_TRUE(report.is_object());
  const auto& tensor_lr = fixNamed(report, "tensor-lr");
  const std::string finding = tensor_lr["finding"].get<std::string>();
  EXPECT_EQ(finding, "recompile/python-scalar at " + script.string() + ":6") << report.dump(2);
  fs::path kept;
  for (const auto& note : report["notes"]) {
    const std::string text = note.get<std::string>();
    if (text.rfind("runs kept in ", 0) == 0) kept = text.substr(std::string("runs kept in ").size());
  }
  ASSERT_FALSE(kept.empty()) << report.dump(2);
  auto reader = store::Reader::open((kept / "runs" / "baseline-1" / "run.db").string());
  ASSERT_TRUE(reader);
  auto run = (*reader)->run();
  ASSERT_TRUE(run);
  EXPECT_EQ(run->command_line, std::string(TORCHSCOPE_PYTHON) + " " + script.string());
  reader.value().reset();
  fs::remove_all(kept);
}

// Only fixes that can help are run: on a job that compiles nothing, the compile fixes cannot act,
// cache-compile has no cache to reuse, a finding below --min-impact is skipped, --max-fixes keeps the
// one with the most impact, and torch-compile, which cannot compile a job without modules, shows no
// effect in its first run and is not run again. Two short runs in all.
TEST_F(FixEndToEnd, OnlyFixesThatCanHelpAreRun) {
  const fs::path script = dir_ / "no_model.py";
  std::ofstream(script) << "print('train_loss=0.5')\n";
  const fs::path store_path = dir_ / "run.db";
  writeStore(store_path, std::string(TORCHSCOPE_PYTHON) + " " + script.string(),
             {{"torch-compile", 0.5}, {"dynamic-shapes", 0.4}, {"cache-compile", 0.3}, {"inference-mode", 0.2},
              {"bf16-autocast", 0.01}});
  const auto report = fix({"--max-fixes", "1", store_path.string()});
  ASSERT_TRUE(report.is_object());
  std::map<std::string, std::string> status;
  for (const auto& fix : report["fixes"]) status[fix["id"].get<std::string>()] = fix["status"].get<std::string>();
  EXPECT_EQ(status["torch-compile"], "no effect") << report.dump(2);
  EXPECT_EQ(status["dynamic-shapes"], "not run");
  EXPECT_EQ(status["cache-compile"], "not run");
  EXPECT_EQ(status["inference-mode"], "not run");
  EXPECT_EQ(status["bf16-autocast"], "not run");
  EXPECT_NE(fixNamed(report, "dynamic-shapes")["reason"].get<std::string>().find("compiles nothing"), std::string::npos);
  EXPECT_NE(fixNamed(report, "cache-compile")["reason"].get<std::string>().find("none of the job's graphs"), std::string::npos);
  EXPECT_NE(fixNamed(report, "inference-mode")["reason"].get<std::string>().find("--max-fixes"), std::string::npos);
  EXPECT_NE(fixNamed(report, "bf16-autocast")["reason"].get<std::string>().find("--min-impact"), std::string::npos);
  EXPECT_EQ(fixNamed(report, "torch-compile")["runs"], 1);
  EXPECT_EQ(report["runs"], 2);  // the first baseline run and torch-compile's only run
  EXPECT_TRUE(report["combined"].is_null());
}

// A source fix edits only the files the job ran: unused.py is imported (so its module code runs)
// but none of its functions is called, so its `.item()` loop is left as it is.
TEST_F(FixEndToEnd, SourceFixesTouchOnlyTheFilesTheJobRan) {
  std::ofstream(dir_ / "unused.py") << R"(
def train_twice(model, x):  # imported by main.py, never called
    total = 0.0
    for step in range(2):
        total += model(x).sum().item()
    return total
)";
  std::ofstream(dir_ / "main.py") << R"(
import torch
import unused
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 4)
for epoch in range(2):
    total = 0.0
    for step in range(3):
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch} loss={total:.6f}")
)";
  // Without the collector the syncs are unknown, so the sync fix may act on this CPU job.
  const auto report = fix({"--no-collector", "--repetitions", "2", "--fixes", "item-accumulate-tensor", "--",
                           TORCHSCOPE_PYTHON, (dir_ / "main.py").string()});
  ASSERT_TRUE(report.is_object());
  const auto& item = fixNamed(report, "item-accumulate-tensor");
  const std::string diff = item["diff"].get<std::string>();
  EXPECT_NE(diff.find("+++ b/main.py"), std::string::npos) << diff;
  EXPECT_EQ(diff.find("unused.py"), std::string::npos) << diff;
  EXPECT_TRUE(item["measured"].get<bool>());
  EXPECT_TRUE(item["parity"]["ok"].get<bool>()) << item.dump();
}

// The profile run's graph-break finding names the `if` on a tensor (line 12); the fix merges it into
// torch.where in its copy: no break left, the same losses, the user's file as it was (no --write).
TEST_F(FixEndToEnd, DataDependentBranchBecomesTorchWhereInTheFixRun) {
  const fs::path script = copyScript("data_dependent_branch.py");
  const std::string original = readTextFile(script.string());
  const auto report =
      fix({"--repetitions", "2", "--fixes", "remove-data-dependent-branch", "--", TORCHSCOPE_PYTHON, script.string()});
  ASSERT_TRUE(report.is_object());
  EXPECT_GT(report["baseline"]["graph_breaks"].get<int>(), 0) << report.dump(2);
  const auto& branch = fixNamed(report, "remove-data-dependent-branch:" + script.string() + ":12");
  EXPECT_NE(branch["diff"].get<std::string>().find("+    y = torch.where(y.mean() > 0, y * 0.5, y)"), std::string::npos)
      << branch.dump(2);
  EXPECT_TRUE(branch["measured"].get<bool>()) << branch.dump(2);
  EXPECT_EQ(branch["graph_breaks_after"], 0) << branch.dump(2);
  EXPECT_TRUE(branch["parity"]["ok"].get<bool>()) << branch.dump(2);
  EXPECT_EQ(readTextFile(script.string()), original);
}

// With --parallel-runs 2 the second baseline run goes beside the first, each pinned to a CPU of its
// own with as many threads: the job sees its affinity and OMP_NUM_THREADS.
TEST_F(FixEndToEnd, ParallelRunsArePinnedToCpusOfTheirOwn) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < 2) {
    GTEST_SKIP() << "needs 2 CPUs";
  }
  const fs::path script = dir_ / "where.py";
  std::ofstream(script) << "import os\n"
                           "print('cpus', sorted(os.sched_getaffinity(0)), 'threads', os.environ.get('OMP_NUM_THREADS'))\n"
                           "print('loss=0.5')\n";
  const auto report = fix({"--parallel-runs", "2", "--keep-temp", "--fixes", "torch-compile", "--",
                           TORCHSCOPE_PYTHON, script.string()});
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["parallel_runs"], 2);
  // Two baseline runs at once, then torch-compile's first two runs together (the wave's free slot
  // takes its second run); it shows no effect, so it stops there.
  EXPECT_EQ(report["runs"], 4) << report.dump(2);
  EXPECT_EQ(report["fixes"][0]["runs"], 2) << report.dump(2);
  std::string kept;
  for (const auto& note : report["notes"]) {
    if (note.get<std::string>().rfind("runs kept in ", 0) == 0) kept = note.get<std::string>().substr(13);
  }
  ASSERT_FALSE(kept.empty()) << report.dump(2);
  // "cpus [0, 1] threads 2" -> {0, 1}, checking that the thread count matches.
  const auto pinned = [&](const std::string& label) {
    const std::string out = readTextFile((fs::path(kept) / "runs" / label / "stdout.txt").string());
    std::set<int> cpus;
    std::istringstream list(out.substr(out.find('[') + 1, out.find(']') - out.find('[') - 1));
    for (std::string cpu; std::getline(list, cpu, ',');) cpus.insert(std::stoi(cpu));
    EXPECT_NE(out.find("threads " + std::to_string(cpus.size()) + "\n"), std::string::npos) << out;
    return cpus;
  };
  const std::set<int> first = pinned("baseline-1");
  const std::set<int> second = pinned("baseline-2");
  fs::remove_all(kept);
  EXPECT_EQ(first.size(), second.size());
  std::vector<int> shared;
  std::set_intersection(first.begin(), first.end(), second.begin(), second.end(), std::back_inserter(shared));
  EXPECT_TRUE(shared.empty()) << "both runs on CPU " << shared.front();
}

// The library a user preloads into the job (an allocator such as tcmalloc, here glibc's small libanl, which
// nothing else maps) is in every process of the job alike: alone, under `run` and under every run of `fix`, with
// the collector added after it under torchscope.
TEST_F(FixEndToEnd, TheJobSeesTheUsersPreloadsUnderFixAsUnderRunAndAlone) {
  const fs::path preload = "/lib/x86_64-linux-gnu/libanl.so.1";
  if (!fs::exists(preload)) GTEST_SKIP() << "no " << preload;
  const fs::path script = copyScript("preloads.py");
  // The user's own import folder, as a job's PYTHONPATH names one.
  const fs::path user_folder = dir_ / "user-lib";
  fs::create_directories(user_folder);
  const auto environment = [&](const std::string& out) {
    return std::map<std::string, std::string>{{"LD_PRELOAD", preload.string()},
                                              {"PYTHONPATH", user_folder.string()},
                                              {"PRELOADS_OUT", (dir_ / out).string()}};
  };
  ProcessSpec alone;
  alone.argv = {TORCHSCOPE_PYTHON, script.string()};
  alone.environment = environment("alone.jsonl");
  ASSERT_EQ(runProcess(alone)->exit_code, 0);
  ProcessSpec run;
  run.argv = {TORCHSCOPE_BINARY_DIR "/bin/torchscope",
              "run",
              "-o",
              (dir_ / "run.db").string(),
              "--",
              TORCHSCOPE_PYTHON,
              script.string()};
  run.environment = environment("run.jsonl");
  ASSERT_EQ(runProcess(run)->exit_code, 0);
  (void)fix({"--repetitions", "2", "--fixes", "tensor-lr", "--", TORCHSCOPE_PYTHON, script.string()}, 0,
            environment("fix.jsonl"));

  const std::string user = fs::canonical(preload).string();
  const std::string collector = fs::canonical(TORCHSCOPE_BINARY_DIR "/lib/libtorchscope_collector.so").string();
  for (const char* name : {"alone.jsonl", "run.jsonl", "fix.jsonl"}) {
    std::istringstream lines(readTextFile((dir_ / name).string()));
    int processes = 0, traced = 0;
    for (std::string line; std::getline(lines, line); ++processes) {
      const auto seen = nlohmann::json::parse(line);
      const auto& mapped = seen["mapped"];
      EXPECT_NE(std::find(mapped.begin(), mapped.end(), user), mapped.end()) << name << ": " << line;
      ASSERT_FALSE(seen["preloaded"].empty()) << name << ": " << line;
      EXPECT_EQ(seen["preloaded"][0], preload.string()) << name << ": " << line;  // the user's first, as given
      traced += std::find(mapped.begin(), mapped.end(), collector) != mapped.end() ? 1 : 0;
      // The user's folder is on the import path, before any folder torchscope adds for its own modules (the
      // bridge's sitecustomize alone comes first, so that the interpreter starts it).
      const auto& path = seen["sys_path"];
      const auto user_entry = std::find(path.begin(), path.end(), user_folder.string());
      ASSERT_NE(user_entry, path.end()) << name << ": " << line;
      for (auto entry = path.begin(); entry != user_entry; ++entry) {
        EXPECT_EQ(entry->get<std::string>().find("share/torchscope/compiler"), std::string::npos)
            << name << ": " << line;
      }
    }
    EXPECT_GT(processes, 0) << name;
    if (std::string(name) == "alone.jsonl") {
      EXPECT_EQ(traced, 0);
    } else {
      EXPECT_GT(traced, 0) << name << ": the collector was not preloaded";
    }
  }
}

TEST_F(FixEndToEnd, BadInputExitsWithUsageError) {
  ProcessSpec spec;
  spec.argv = {TORCHSCOPE_BINARY_DIR "/bin/torchscope", "fix", (dir_ / "missing.db").string()};
  spec.stderr_path = (dir_ / "err.txt").string();
  auto result = runProcess(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 2);
  spec.argv = {TORCHSCOPE_BINARY_DIR "/bin/torchscope", "fix", "--fixes", "no-such-fix", "--", "python", "x.py"};
  result = runProcess(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 2);
}

// A run folder without stores, or with several and no run.db to say whose job to re-run: a usage error that says
// so; the report is never written over one of the folder's stores.
TEST_F(FixEndToEnd, RunFoldersItCannotReRunAreUsageErrors) {
  const fs::path folder = dir_ / "runs";
  fs::create_directory(folder);
  ProcessSpec spec;
  spec.argv = {TORCHSCOPE_BINARY_DIR "/bin/torchscope", "fix", folder.string()};
  spec.stderr_path = (dir_ / "err.txt").string();
  auto result = runProcess(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 2);
  EXPECT_NE(readTextFile(spec.stderr_path).find("a folder without torchscope stores"), std::string::npos)
      << readTextFile(spec.stderr_path);

  const std::string job = std::string(TORCHSCOPE_PYTHON) + " job.py";
  writeStore(folder / "a.db", job, {{"dynamic-shapes", 0.4}});
  writeStore(folder / "b.db", job, {{"dynamic-shapes", 0.4}});
  result = runProcess(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 2);
  EXPECT_NE(readTextFile(spec.stderr_path).find("2 stores and no run.db"), std::string::npos)
      << readTextFile(spec.stderr_path);

  writeStore(folder / "run.db", job, {{"dynamic-shapes", 0.4}});
  const auto before = fs::file_size(folder / "run.db");
  spec.argv = {TORCHSCOPE_BINARY_DIR "/bin/torchscope", "fix", "-o", (folder / "run.db").string(), folder.string()};
  result = runProcess(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 2) << readTextFile(spec.stderr_path);
  EXPECT_EQ(fs::file_size(folder / "run.db"), before);
}

}  // namespace
}  // namespace torchscope::compiler
