// Runs one variant of the job (baseline, a fix, the combination) and reads back what it measured.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "torchscope/compiler/Experiment.h"
#include "torchscope/compiler/Measurement.h"
#include "torchscope/compiler/Workspace.h"

namespace torchscope::compiler {

struct Variant {
  std::string name;
  std::string runtime_specs;           // TORCHSCOPE_FIXES for its runs
  std::filesystem::path copy_root;     // the copy of the job's files it runs from
  std::vector<RunMeasurement> runs;
  std::size_t outcome_index = 0;
};

class Runner {
 public:
  Runner(JobLayout job, const FixOptions& options, std::filesystem::path temp_root);

  [[nodiscard]] bool collectorUsed() const { return collector_; }
  // Before the first run (Preflight.cpp): the job's Python starts and imports torch and the launcher, the temp
  // folder takes files, and one interpreter (FixOptions::tool_pythons, then the job's) imports the LibCST rewrite,
  // which then runs there: a job whose environment lacks LibCST still gets source fixes. An Error says which
  // check failed, with what the interpreter printed.
  [[nodiscard]] Result<void> preflight();
  // Compiles Inductor's CPU-feature probes once into a seed that every run's private compile cache
  // starts from (a machine that has compiled once keeps them in its default cache); no graph of the
  // job is in it. Call before the first run; without it, or when it fails, runs start empty.
  void seedCompileCache();
  [[nodiscard]] bool compileCacheSeeded() const { return !compile_cache_seed_.empty(); }
  // One run; `label` names its folder under the temp root; `slot` (0 .. parallel_runs-1) picks its
  // share of the CPUs when several runs go at once. Safe to call from several threads at a time.
  // A job that fails is a result with its exit code; an Error only when it could not be started.
  [[nodiscard]] Result<RunMeasurement> run(const Variant& variant, const std::string& label, int slot = 0) const;
  // Applies source fixes in place to a copy; returns the unified diff (paths relative to the copy).
  // Only the .py files under the job's rewrite root are rewritten, and of those only `executed`
  // (paths relative to the copy) when it is given. `notes` gets what the rewrite said on stderr (why a
  // fix aimed at a line left it alone), one line each joined by " | ".
  [[nodiscard]] Result<std::string> rewrite(const std::filesystem::path& copy_root,
                                            const std::vector<std::string>& specs,
                                            const std::optional<std::vector<std::filesystem::path>>& executed,
                                            std::string* notes = nullptr);
  // "exit N: <stderr's last lines>", and where the whole stderr is: the run folders are removed at the
  // end unless --keep-temp, so a path alone would point at nothing.
  [[nodiscard]] std::string describeFailure(const RunMeasurement& run) const;
  // "2 at a time, each on 1 of the 2 CPUs": empty when runs go one at a time.
  [[nodiscard]] std::string parallelismNote() const;

 private:
  [[nodiscard]] std::string pythonPath() const;
  [[nodiscard]] std::vector<int> cpusOfSlot(int slot) const;

  JobLayout job_;
  const FixOptions& options_;
  std::filesystem::path temp_root_;
  bool collector_ = false;
  std::vector<int> cpus_;                   // the CPUs this process may use
  std::filesystem::path compile_cache_seed_;  // empty: runs start from an empty cache
  std::string tool_python_;                   // runs the rewrite (preflight); empty: the job's Python
};

// The last `count` non-empty lines of `text`, joined by " | ".
[[nodiscard]] std::string lastLines(const std::string& text, int count);

// A distributed run's figures from its ranks' launcher reports (launch.rank<r>.json in `folder`, with
// stdout.rank<r>.txt and stderr.rank<r>.txt): the job's steps, compiles and first step are those of its
// slowest rank (the largest median steady-state step: the others wait for it), counts the largest of
// any rank, the parity values every rank's in rank order, and a rank that failed fails the run with
// its own stderr as the error. With the collector, the slowest rank's store (run.rank<r>.<pid>.db
// beside the launcher's run.db) gives the recompile causes.
void readRanks(const std::filesystem::path& folder, const std::string& parity_pattern, RunMeasurement& run);

// Medians, counts and per-run metric values of a variant's runs (speed-ups are left to the caller).
[[nodiscard]] VariantStats summarize(const Variant& variant, int warmup_steps);
[[nodiscard]] std::vector<std::vector<double>> parityValues(const Variant& variant);

// The job's own files that `run` executed, relative to `copy_root` (the copy it ran from); nullopt
// when the run did not report them.
[[nodiscard]] std::optional<std::vector<std::filesystem::path>> executedFiles(const RunMeasurement& run,
                                                                               const std::filesystem::path& copy_root);

}  // namespace torchscope::compiler
