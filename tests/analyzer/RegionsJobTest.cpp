// The compiled-region table on real torch.compile runs on the CPU: a small transformer block and a loss function
// compiled with mode="reduce-overhead", recorded compiled and with `TORCHSCOPE_FIXES=eager`, read back through
// `torchscope advise --regions --against`; `torchscope fix --fixes eager` on the compiled job; a one-thread job
// fed by DataLoader workers (the report's span, CPU within wall, the payoff's words); `fix --fixes torch-compile`
// on a job that compiling slows.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <utility>
#include <vector>

#include "TestSupport.h"
#include "torchscope/analyzer/Regions.h"
#include "torchscope/store/Reader.h"
#include "torchscope/testing/Subprocess.h"

namespace torchscope::analyzer::testing {
namespace {

using torchscope::testing::ProgramOptions;
using torchscope::testing::ProgramOutcome;
using torchscope::testing::runTorchscope;
using torchscope::testing::runUnderTorchscope;

constexpr int kSteps = 12;

std::string jobScript() { return sourcePath("tests/analyzer/regions/compiled_regions.py").string(); }

ProgramOutcome record(const std::filesystem::path& store, const std::map<std::string, std::string>& env = {}) {
  ProgramOptions options;
  options.env = env;
  return runUnderTorchscope(store, {TORCHSCOPE_PYTHON, jobScript(), std::to_string(kSteps)}, options);
}

nlohmann::json regionsJson(const std::string& arguments) {
  const ProgramOutcome advice = runTorchscope("advise --regions --format json " + arguments);
  EXPECT_EQ(advice.exit_code, 0) << advice.err;
  return nlohmann::json::parse(advice.out, nullptr, false);
}

const nlohmann::json* regionNamed(const nlohmann::json& table, const std::string& name) {
  for (const auto& region : table["regions"]) {
    if (region["name"] == name) return &region;
  }
  return nullptr;
}

// The job recorded compiled and with compilation off; ctest runs each test in a process of its own, so the checks
// of both records are one test (together about a minute on two busy cores).
struct Recorded {
  TempDir scratch;
  std::string compiled = (scratch.path() / "compiled.db").string();
  std::string eager = (scratch.path() / "eager.db").string();
  ProgramOutcome compiled_job = record(compiled);
  ProgramOutcome eager_job = record(eager, {{"TORCHSCOPE_FIXES", "eager"}});
};

// Each torch.compile result is a row with its lines, calls and frames.
void checkRegionRows(const std::string& compiled_store) {
  const auto table = regionsJson("'" + compiled_store + "'");
  ASSERT_TRUE(table.is_object());
  EXPECT_EQ(table["timed_per_call"], true);
  const auto* block = regionNamed(table, "Block.forward");
  const auto* loss = regionNamed(table, "squared_error");
  ASSERT_NE(block, nullptr) << table.dump(1);
  ASSERT_NE(loss, nullptr) << table.dump(1);
  const int site = torchscope::testing::markedLine(jobScript(), "model");
  EXPECT_EQ((*block)["site"]["line"], site);
  EXPECT_EQ((*loss)["site"]["line"], torchscope::testing::markedLine(jobScript(), "loss"));
  EXPECT_EQ((*block)["call"]["line"], torchscope::testing::markedLine(jobScript(), "call"));
  for (const auto* region : {block, loss}) {
    EXPECT_EQ((*region)["calls"], kSteps);
    EXPECT_GE((*region)["compile_calls"].get<int>(), 1);
    EXPECT_GE((*region)["graphs"].get<int>(), 1);
    EXPECT_GT((*region)["compile_seconds"].get<double>(), 0);
    EXPECT_GT((*region)["wall_per_call_seconds"].get<double>(), 0);
    EXPECT_GT((*region)["cpu_per_call_seconds"].get<double>(), 0);
  }
  // The loss asked for CUDA graphs, which a CPU run cannot use (Inductor gives no reason for graphs without CUDA).
  ASSERT_TRUE((*loss)["cudagraphs"].is_string()) << loss->dump(1);
  EXPECT_EQ((*loss)["cudagraphs"].get<std::string>().rfind("not used: no GPU", 0), 0u) << (*loss)["cudagraphs"];
  EXPECT_TRUE((*block)["cudagraphs"].is_null());
}

// The rows add up to the run's compile and step times.
void checkRegionSums(const std::string& compiled_store) {
  const auto table = regionsJson("'" + compiled_store + "'");
  const double run_compile = table["compile_seconds"].get<double>();
  double rows_compile = 0;
  double share = 0;
  double stages = 0;
  for (const auto& region : table["regions"]) {
    rows_compile += region["compile_seconds"].get<double>();
    if (region["steady_step_share"].is_number()) share += region["steady_step_share"].get<double>();
    for (const auto& [stage, seconds] : region["compile_stages_seconds"].items()) stages += seconds.get<double>();
  }
  ASSERT_GT(run_compile, 0);
  // Every compilation belongs to one row and the rows' compilations do not overlap.
  EXPECT_NEAR(rows_compile, run_compile, 0.02 * run_compile);
  // torch's stage times cover its compile time (less what surrounds them: guards, bytecode).
  EXPECT_LE(stages, rows_compile * 1.05);
  EXPECT_GT(stages, rows_compile * 0.5);
  // The regions run inside the steps: their share of the steady-state steps is at most all of them.
  EXPECT_GT(share, 0);
  EXPECT_LE(share, 1.0);
  EXPECT_EQ(table["steps"], kSteps);
}

// Against the eager run each region has a speed-up, and compiling a dozen steps does not pay.
void checkAgainstEager(const std::string& compiled_store, const std::string& eager_store) {
  const auto eager_table = regionsJson("'" + eager_store + "'");
  EXPECT_EQ(eager_table["compile_seconds"], 0.0);  // compilation off
  EXPECT_EQ(regionNamed(eager_table, "Block.forward")->at("calls"), kSteps);

  const auto table = regionsJson("'" + compiled_store + "' --against '" + eager_store + "'");
  EXPECT_EQ(table["pays"], false);  // a dozen steps never repay seconds of compiling
  for (const char* name : {"Block.forward", "squared_error"}) {
    const auto* region = regionNamed(table, name);
    ASSERT_NE(region, nullptr);
    EXPECT_EQ((*region)["eager_calls"], kSteps);
    EXPECT_GT((*region)["eager_wall_per_call_seconds"].get<double>(), 0);
    EXPECT_GT((*region)["speedup"].get<double>(), 0);
  }
  const ProgramOutcome advice =
      runTorchscope("advise --format json '" + compiled_store + "' --against '" + eager_store + "'");
  ASSERT_EQ(advice.exit_code, 0) << advice.err;
  const auto findings = nlohmann::json::parse(advice.out)["findings"];
  bool reported = false;
  for (const auto& finding : findings) reported = reported || finding["rule"] == "compile/does-not-pay";
  EXPECT_TRUE(reported) << advice.out;
  const ProgramOutcome text =
      runTorchscope("advise --regions '" + compiled_store + "' --against '" + eager_store + "'");
  EXPECT_NE(text.out.find("compilation does not pay at this run length"), std::string::npos) << text.out;
}

TEST(RegionsJob, TableOfACompiledJobAndOfItsEagerRun) {
  Recorded runs;
  ASSERT_EQ(runs.compiled_job.exit_code, 0) << runs.compiled_job.err;
  ASSERT_EQ(runs.eager_job.exit_code, 0) << runs.eager_job.err;
  {
    SCOPED_TRACE("rows");
    checkRegionRows(runs.compiled);
  }
  {
    SCOPED_TRACE("sums");
    checkRegionSums(runs.compiled);
  }
  {
    SCOPED_TRACE("against eager");
    checkAgainstEager(runs.compiled, runs.eager);
  }
}

TEST(RegionsJob, FixEagerMeasuresTheJobWithCompilationOff) {
  // The user's Inductor cache, which the recording test fills: the baseline runs load its graphs when it ran.
  TempDir dir;
  const ProgramOutcome fix = runTorchscope(
      "fix --fixes eager --repetitions 2 --shared-compile-cache --format json -- '" TORCHSCOPE_PYTHON "' '" +
      jobScript() + "' " + std::to_string(kSteps) + " > '" + dir.file("fix.json") + "'");
  ASSERT_EQ(fix.exit_code, 0) << fix.err;
  std::ifstream in(dir.file("fix.json"));
  const auto report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object()) << fix.err;
  ASSERT_EQ(report["fixes"].size(), 1u) << report.dump(1);
  const auto& eager = report["fixes"][0];
  EXPECT_EQ(eager["id"], "eager");
  ASSERT_EQ(eager["measured"], true) << eager.dump(1);
  EXPECT_EQ(eager["parity"]["ok"], true) << eager.dump(1);                     // the same losses, computed eagerly
  EXPECT_LT(eager["compile_time_delta_s"].get<double>(), 0) << eager.dump(1);  // it compiles nothing
  // Per region: the baseline's compiled calls against the fix's eager ones, and the verdict in words.
  const auto& worth = eager["regions"];
  ASSERT_TRUE(worth.is_object()) << eager.dump(1);
  double saved = 0;
  for (const char* name : {"Block.forward", "squared_error"}) {
    const nlohmann::json* region = nullptr;
    for (const auto& each : worth["regions"]) {
      if (each["name"] == name) region = &each;
    }
    ASSERT_NE(region, nullptr) << worth.dump(1);
    EXPECT_EQ((*region)["calls"], kSteps);
    EXPECT_EQ((*region)["eager_calls"], kSteps);
    EXPECT_GT((*region)["eager_per_call_s"].get<double>(), 0);
    EXPECT_GT((*region)["compiled_per_call_s"].get<double>(), 0);
    saved += (*region)["saved_s"].get<double>();
  }
  EXPECT_NEAR(worth["saved_s"].get<double>(), saved, 1e-9);
  EXPECT_EQ(worth["pays"], false);  // a dozen steps never repay seconds of compiling
  EXPECT_NE(worth["verdict"].get<std::string>().find("does not pay"), std::string::npos) << worth["verdict"];
}

std::string dataLoaderScript() { return sourcePath("tests/analyzer/regions/dataloader_one_thread.py").string(); }

// The wall-clock span of a run folder's stores, the union of their runs' intervals (one host, one monotonic
// clock), and their durations added up.
struct FolderTimes {
  std::size_t stores = 0;
  double union_s = 0;
  double summed_s = 0;
};

FolderTimes folderTimes(const std::filesystem::path& folder) {
  std::vector<std::pair<std::int64_t, std::int64_t>> intervals;
  FolderTimes times;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".db") continue;
    auto reader = store::Reader::open(entry.path().string());
    EXPECT_TRUE(reader.ok()) << entry.path();
    if (!reader.ok()) continue;
    auto run = (*reader)->run();
    EXPECT_TRUE(run.ok() && run->end_ns > run->start_ns) << entry.path();
    if (!run.ok()) continue;
    intervals.emplace_back(run->start_ns, run->end_ns);
    times.summed_s += static_cast<double>(run->end_ns - run->start_ns) / 1e9;
    ++times.stores;
  }
  std::sort(intervals.begin(), intervals.end());
  std::int64_t open = 0, close = -1;
  for (const auto& [begin, end] : intervals) {
    if (begin > close) {
      if (close > open) times.union_s += static_cast<double>(close - open) / 1e9;
      open = begin;
    }
    close = std::max(close, end);
  }
  if (close > open) times.union_s += static_cast<double>(close - open) / 1e9;
  return times;
}

// A compiled job on one thread fed by a DataLoader of 2 workers, recorded compiled (3 stores) and with compilation
// off: the report's span is the job's, the CPU time per call within the wall time of the same calls, and the
// compile time paid off only when this run made the calls.
TEST(RegionsJob, ADataLoaderJobOnOneThread) {
  TempDir scratch;
  const auto compiled_dir = scratch.path() / "compiled";
  const auto eager_dir = scratch.path() / "eager";
  const ProgramOutcome compiled_job =
      runUnderTorchscope(compiled_dir.string() + "/", {TORCHSCOPE_PYTHON, dataLoaderScript()});
  ASSERT_EQ(compiled_job.exit_code, 0) << compiled_job.err;
  ProgramOptions eager_options;
  eager_options.env = {{"TORCHSCOPE_FIXES", "eager"}};
  const ProgramOutcome eager_job =
      runUnderTorchscope(eager_dir.string() + "/", {TORCHSCOPE_PYTHON, dataLoaderScript()}, eager_options);
  ASSERT_EQ(eager_job.exit_code, 0) << eager_job.err;
  {
    SCOPED_TRACE("the job's span");
    const FolderTimes times = folderTimes(compiled_dir);
    ASSERT_EQ(times.stores, 3u);                     // the main process and its 2 workers
    EXPECT_LT(times.union_s, 0.9 * times.summed_s);  // the workers ran beside the main process
    const ProgramOutcome advice = runTorchscope("advise '" + compiled_dir.string() + "'");
    ASSERT_EQ(advice.exit_code, 0) << advice.err;
    const std::string headline = advice.out.substr(0, advice.out.find('\n'));
    const std::string processes = " s job of 3 processes (the main one and 2 DataLoader workers)";
    const auto named = headline.find(processes);
    ASSERT_NE(named, std::string::npos) << headline;
    const auto span_at = headline.rfind("this ", named) + 5;
    EXPECT_NEAR(std::stod(headline.substr(span_at, named - span_at)), times.union_s, 0.006) << headline;
    // The compile/time finding is the main process's: its fraction is of the job's span, as the sentence says.
    const ProgramOutcome json = runTorchscope("advise --format json '" + compiled_dir.string() + "'");
    ASSERT_EQ(json.exit_code, 0) << json.err;
    bool compile_found = false;
    const auto report = nlohmann::json::parse(json.out);
    for (const auto& finding : report["findings"]) {
      if (finding["rule"] != "compile/time") continue;
      compile_found = true;
      EXPECT_NEAR(finding["impact"]["fraction"].get<double>(),
                  finding["impact"]["seconds"].get<double>() / times.union_s, 1e-3);
      EXPECT_NE(headline.find(fmt::format("{:.1f} % of this", finding["impact"]["fraction"].get<double>() * 100)),
                std::string::npos)
          << headline;
    }
    EXPECT_TRUE(compile_found) << json.out;
  }
  const std::string compiled_store = (compiled_dir / "run.db").string();
  const std::string eager_store = (eager_dir / "run.db").string();
  const auto table = regionsJson("'" + compiled_store + "' --against '" + eager_store + "'");
  const auto* region = regionNamed(table, "activation");
  ASSERT_NE(region, nullptr) << table.dump(1);
  {
    SCOPED_TRACE("CPU within wall on one thread");
    // Two calls a step, the first of each step's read: CPU time on about half of them.
    const int cpu_calls = (*region)["cpu_calls"].get<int>();
    EXPECT_GT(cpu_calls, 0);
    EXPECT_LT(cpu_calls, (*region)["steady_calls"].get<int>());
    const double cpu = (*region)["cpu_per_call_seconds"].get<double>();
    const double wall = (*region)["cpu_wall_per_call_seconds"].get<double>();
    EXPECT_GT(cpu, 0);
    EXPECT_LE(cpu, wall * (1 + 1e-4) + 1e-7) << region->dump(1);  // one thread runs at most as long as it waits
    EXPECT_LE((*region)["run_cpu_seconds"].get<double>(), (*region)["run_wall_seconds"].get<double>() * (1 + 1e-4));
  }
  {
    SCOPED_TRACE("paid off only when this run made the calls");
    const ProgramOutcome text =
        runTorchscope("advise --regions '" + compiled_store + "' --against '" + eager_store + "'");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_EQ(table["pays"], false);  // a short run never repays seconds of compiling
    if ((*region)["payoff_calls"].is_number()) {
      const double payoff = std::ceil((*region)["payoff_calls"].get<double>());
      const int calls = (*region)["calls"].get<int>();
      EXPECT_LT(calls, payoff);
      EXPECT_NE(text.out.find(fmt::format("would pay off after {:.0f} calls; this run made {}", payoff, calls)),
                std::string::npos)
          << text.out;
    } else {  // slower compiled on this machine now: it never pays
      EXPECT_NE(text.out.find("never pays off"), std::string::npos) << text.out;
    }
    EXPECT_EQ(text.out.find("paid off"), std::string::npos) << text.out;
  }
}

// `fix --fixes torch-compile` on a job that compiling slows: what the compiled regions saved (lost) is told with
// its sign, in the words and figures `advise --regions` gives on the same two stores.
TEST(RegionsJob, FixTorchCompileTellsWhatTheRegionsSavedWithItsSign) {
  TempDir dir;  // the runs the fix keeps go under it
  const std::string script = sourcePath("tests/analyzer/regions/slower_compiled.py").string();
  const ProgramOutcome fix =
      runTorchscope("fix --fixes torch-compile --repetitions 2 --keep-temp --format json -- '" TORCHSCOPE_PYTHON "' '" +
                        script + "' > '" + dir.file("fix.json") + "'",
                    "TMPDIR='" + dir.path().string() + "'");
  ASSERT_EQ(fix.exit_code, 0) << fix.err;
  std::ifstream in(dir.file("fix.json"));
  const auto report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object()) << fix.err;
  ASSERT_EQ(report["fixes"].size(), 1u) << report.dump(1);
  const auto& worth = report["fixes"][0]["regions"];
  ASSERT_TRUE(worth.is_object()) << report.dump(1);
  const double saved = worth["saved_s"].get<double>();
  // Compiling slows this job's tiny calls (0.45x here on an idle machine), but a loaded machine can swing one run's
  // calls either way: the words keep the sign the figures have, and never clamp a loss to "saved 0 s".
  const std::string told = "the compiled regions " + regionsSavedText(saved) + " over this run's calls";
  const std::string verdict = worth["verdict"].get<std::string>();
  EXPECT_NE(verdict.find(told), std::string::npos) << verdict;
  if (saved < 0) {
    EXPECT_EQ(verdict.find("saved"), std::string::npos) << verdict;
  }
  // advise on the stores the fix compared says the same, in the same figures.
  const std::string stores = "'" + worth["compiled_store"].get<std::string>() + "' --against '" +
                             worth["eager_store"].get<std::string>() + "'";
  const auto table = regionsJson(stores);
  EXPECT_DOUBLE_EQ(table["saved_seconds"].get<double>(), saved);
  const ProgramOutcome text = runTorchscope("advise --regions " + stores);
  EXPECT_NE(text.out.find(told), std::string::npos) << text.out;
  const ProgramOutcome advice = runTorchscope("advise " + stores);
  EXPECT_NE(advice.out.find("the compiled regions ran " + regionSecondsText(std::abs(saved)) +
                            (saved < 0 ? " slower" : " faster")),
            std::string::npos)
      << advice.out;
}

// A TORCH_TRACE log recorded from torch 2.13, with Inductor's CUDA-graph skip reason set in its compilation
// metrics as a GPU run logs it: imported, every compiled frame is a row (calls unknown) that gives the reason.
TEST(RegionsImport, ATorchTraceLogsCudaGraphSkipReasonsReachTheTable) {
  TempDir dir;
  const std::string log = dir.file("trace.log");
  const auto edited = torchscope::testing::runShell(
      "zcat '" + sourcePath("tests/interop/data/torch_versions/torch-2.13.0-cold.log.gz").string() +
      "' | sed 's/\"cudagraph_skip_reason\": null/\"cudagraph_skip_reason\": \"skipping cudagraphs due to mutated "
      "inputs (1 instances)\"/' > '" +
      log + "'");
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  const auto imported = runTorchscope("import '" + log + "' -o '" + dir.file("trace.db") + "'");
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const auto table = regionsJson("'" + dir.file("trace.db") + "'");
  ASSERT_FALSE(table["regions"].empty()) << table.dump(1);
  EXPECT_EQ(table["timed_per_call"], false);
  for (const auto& region : table["regions"]) {
    EXPECT_TRUE(region["calls"].is_null());
    EXPECT_EQ(region["cudagraphs"], "skipped: mutated inputs (1 instances)") << region.dump(1);
  }
}

}  // namespace
}  // namespace torchscope::analyzer::testing
