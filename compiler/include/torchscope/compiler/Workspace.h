// The job to re-run and the private copies of its files that fixes are applied to.
//
// A copy mirrors the folder of the job's script: .py files are copied (so rewrites never reach the
// user's files), everything else is symlinked (data stays where it is). Only writeBack() touches
// the user's files, and it keeps a backup of each one first.
// Error contract: Result errors for a job that is not `python [options] script.py|-m module ...`,
// for unreadable folders and for failed copies; nothing throws.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "torchscope/base/Result.h"

namespace torchscope::compiler {

// Splits a command line stored as text: a JSON array of strings, or shell-like words with
// '...' and "..." quoting and backslash escapes (the inverse of store::joinCommandLine).
[[nodiscard]] std::vector<std::string> splitCommandLine(const std::string& text);

struct JobLayout {
  std::string python;                       // the interpreter, as given
  std::vector<std::string> python_options;  // e.g. -u, -W ignore
  std::filesystem::path script;             // absolute; empty for -m
  std::string module;                       // for `python -m module`
  std::vector<std::string> arguments;       // the script's own arguments
  std::filesystem::path working_directory;  // where the job was started
  std::string command_line;                 // the job as the user gave it (store::joinCommandLine), for its store and reports
  // A distributed job: the launcher and its options up to the script, e.g. {"torchrun", "--standalone",
  // "--nproc_per_node=2"} or {"python", "-m", "torch.distributed.run", ...}; empty for a plain python job.
  std::vector<std::string> launcher;
  [[nodiscard]] bool distributed() const { return !launcher.empty(); }
  [[nodiscard]] std::filesystem::path sourceRoot() const;  // the script's folder (or the working directory)
  // The folder source fixes may change: the script's folder, or the package folder of -m a.b.c
  // (a/b under the working directory, when it exists).
  [[nodiscard]] std::filesystem::path rewriteRoot() const;
};

// `python [options] script.py|-m module ARGS`, or the same started by `torchrun [options]` or
// `python -m torch.distributed.run [options]` (every rank is re-run); mpirun/mpiexec/srun are refused
// with the reason.
[[nodiscard]] Result<JobLayout> analyzeJob(const std::vector<std::string>& argv,
                                           const std::filesystem::path& working_directory);

// Copies the job's source folder to `destination` (.py files copied, the rest symlinked; hidden
// folders, __pycache__, build and virtual-environment folders skipped).
[[nodiscard]] Result<void> copyJobTree(const JobLayout& job, const std::filesystem::path& destination);

// The .py files under a copy (regular files only), sorted.
[[nodiscard]] std::vector<std::filesystem::path> pythonFiles(const std::filesystem::path& root);

// Where a path of the user's tree lives in a copy rooted at `copy_root`.
[[nodiscard]] std::filesystem::path inCopy(const JobLayout& job, const std::filesystem::path& copy_root,
                                           const std::filesystem::path& user_path);

struct WrittenFile {
  std::string path;
  std::string backup;
};

// Copies every .py file under the rewrite root of `copy_root` that differs from the user's version over it, after
// saving the user's version as <file>.torchscope.bak (or .bak.N when that exists).
[[nodiscard]] Result<std::vector<WrittenFile>> writeBack(const JobLayout& job, const std::filesystem::path& copy_root);

}  // namespace torchscope::compiler
