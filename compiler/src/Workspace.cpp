#include "torchscope/compiler/Workspace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "torchscope/base/JsonText.h"
#include "torchscope/compiler/Process.h"
#include "torchscope/store/CommandLine.h"
#include "torchscope/store/Files.h"

namespace torchscope::compiler {
namespace fs = std::filesystem;

std::vector<std::string> splitCommandLine(const std::string& text) {
  if (!text.empty() && text.front() == '[') {
    const auto parsed = base::parseJson(text);
    if (parsed.is_array()) {
      std::vector<std::string> words;
      for (const auto& word : parsed) {
        if (word.is_string()) words.push_back(word.get<std::string>());
      }
      return words;
    }
  }
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        word += text[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

fs::path JobLayout::sourceRoot() const { return script.empty() ? working_directory : script.parent_path(); }

fs::path JobLayout::rewriteRoot() const {
  if (!script.empty()) return script.parent_path();
  fs::path package = working_directory;
  const std::string dotted = module.substr(0, module.rfind('.') == std::string::npos ? 0 : module.rfind('.'));
  std::size_t begin = 0;
  while (begin < dotted.size()) {
    const std::size_t end = std::min(dotted.find('.', begin), dotted.size());
    package /= dotted.substr(begin, end - begin);
    begin = end + 1;
  }
  std::error_code error;
  return fs::is_directory(package, error) ? package : working_directory;
}

namespace {

// torchrun's options that take no value; every other option takes the next word unless written --opt=value.
bool launcherFlag(const std::string& word) {
  static const std::set<std::string> kFlags = {"--standalone", "--no-python",          "--no_python",
                                               "--run-path",   "--run_path",           "-m",
                                               "--module",     "--virtual-local-rank", "--virtual_local_rank"};
  return kFlags.count(word) != 0 || word.find('=') != std::string::npos;
}

// Splits `LAUNCHER [options] script.py ARGS` (or `... -m module ARGS`) into the launcher part and
// `python script.py ARGS` as a plain job; `first_option` is the index of the launcher's first option.
Result<JobLayout> analyzeLaunched(const std::vector<std::string>& argv, std::size_t first_option, std::string python,
                                  const fs::path& working_directory) {
  std::vector<std::string> launcher(argv.begin(), argv.begin() + static_cast<std::ptrdiff_t>(first_option));
  if (launcher[0].find('/') != std::string::npos && fs::path(launcher[0]).is_relative()) {
    launcher[0] = (working_directory / launcher[0]).lexically_normal().string();  // must survive running from a copy
  }
  std::vector<std::string> job_argv = {std::move(python)};
  std::size_t i = first_option;
  for (; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (word == "--no-python" || word == "--no_python") {
      return makeError(ErrorCode::kInvalidArgument,
                       "fix cannot re-run a `torchrun --no-python` job: its ranks are not "
                       "Python scripts the launcher can measure");
    }
    if (word == "-m" || word == "--module") {
      job_argv.emplace_back("-m");
      ++i;
      break;
    }
    if (word.empty() || word[0] != '-') break;
    launcher.push_back(word);
    if (!launcherFlag(word) && i + 1 < argv.size()) launcher.push_back(argv[++i]);
  }
  job_argv.insert(job_argv.end(), argv.begin() + static_cast<std::ptrdiff_t>(std::min(i, argv.size())), argv.end());
  auto job = analyzeJob(job_argv, working_directory);
  if (!job) return job.error();
  job->launcher = std::move(launcher);
  job->command_line = store::joinCommandLine(argv);
  return job;
}

}  // namespace

Result<JobLayout> analyzeJob(const std::vector<std::string>& argv, const fs::path& working_directory) {
  if (argv.empty()) return makeError(ErrorCode::kInvalidArgument, "no job command given");
  const std::string interpreter = fs::path(argv[0]).filename().string();
  if (interpreter == "mpirun" || interpreter == "mpiexec" || interpreter == "srun") {
    return makeError(
        ErrorCode::kInvalidArgument,
        "fix cannot re-run `" + interpreter +
            "` jobs: it measures a rank through torchscope's launcher, "
            "which only torchrun (`torchrun` or `python -m torch.distributed.run`) can be told to start in "
            "every rank; run one rank's work under torchrun, or `torchscope run` the job and read its findings");
  }
  if (interpreter == "torchrun") {
    // The ranks' interpreter: the python beside torchrun (its virtual environment), for the tools fix runs itself.
    const fs::path beside = fs::path(argv[0]).parent_path() / "python";
    std::error_code error;
    const std::string python = fs::exists(beside, error) ? beside.string() : "python3";
    return analyzeLaunched(argv, 1, python, working_directory);
  }
  if (interpreter.rfind("python", 0) == 0) {
    for (std::size_t i = 1; i + 1 < argv.size() && argv[i].rfind('-', 0) == 0; ++i) {
      if (argv[i] == "-m" && (argv[i + 1] == "torch.distributed.run" || argv[i + 1] == "torch.distributed.launch")) {
        return analyzeLaunched(argv, i + 2, argv[0], working_directory);
      }
      if (argv[i] == "-m") break;
    }
  }
  if (interpreter.rfind("python", 0) != 0) {
    return makeError(
        ErrorCode::kInvalidArgument,
        "fix needs a job started as `python script.py ...`, `python -m module ...` or `torchrun ... script.py`, "
        "not '" +
            argv[0] + "'");
  }
  JobLayout job;
  // A relative interpreter path (.venv/bin/python) must survive running from the copy.
  job.python = argv[0].find('/') != std::string::npos && fs::path(argv[0]).is_relative()
                   ? (working_directory / argv[0]).lexically_normal().string()
                   : argv[0];
  job.working_directory = working_directory;
  job.command_line = store::joinCommandLine(argv);
  static const std::set<std::string> kOptionsWithValue = {"-W", "-X", "--check-hash-based-pycs"};
  std::size_t i = 1;
  for (; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (word == "-m") {
      if (i + 1 >= argv.size()) return makeError(ErrorCode::kInvalidArgument, "`-m` without a module name");
      job.module = argv[i + 1];
      i += 2;
      break;
    }
    if (word == "-c") return makeError(ErrorCode::kInvalidArgument, "fix cannot re-run `python -c` jobs");
    if (word.empty() || word[0] != '-') {
      const fs::path script = fs::path(word).is_absolute() ? fs::path(word) : working_directory / word;
      std::error_code error;
      if (!fs::is_regular_file(script, error)) return makeError(ErrorCode::kNotFound, "no such script: " + word);
      job.script = fs::weakly_canonical(script, error);
      ++i;
      break;
    }
    job.python_options.push_back(word);
    if (kOptionsWithValue.count(word) && i + 1 < argv.size()) job.python_options.push_back(argv[++i]);
  }
  if (job.script.empty() && job.module.empty()) return makeError(ErrorCode::kInvalidArgument, "the job names no script");
  job.arguments.assign(argv.begin() + static_cast<std::ptrdiff_t>(std::min(i, argv.size())), argv.end());
  return job;
}

namespace {

bool skippedFolder(const fs::path& folder) {
  const std::string name = folder.filename().string();
  return name.empty() || name[0] == '.' || name == "__pycache__" || name == "build" || name == "venv" ||
         name == "node_modules" || name == "site-packages";
}

constexpr std::size_t kMaxEntries = 20000;
constexpr int kMaxDepth = 32;  // deeper is a cycle of linked folders

// True when `folder` holds a Python file, looking at most at kMaxEntries entries.
bool holdsPython(const fs::path& folder) {
  std::error_code error;
  std::size_t seen = 0;
  auto it = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied, error);
  for (; !error && it != fs::recursive_directory_iterator() && ++seen <= kMaxEntries; it.increment(error)) {
    if (it->path().extension() == ".py") return true;
  }
  return false;
}

class TreeCopy {
 public:
  explicit TreeCopy(fs::path root) : root_(std::move(root)) {}

  // .py files are copied (fixes rewrite them), other files linked. A linked folder is copied the same
  // way when it holds Python files (a package the job imports through a link: rewriting through the
  // link would edit the user's files) and linked whole otherwise (data).
  Result<void> copy(const fs::path& from, const fs::path& to, int depth) {
    std::error_code error;
    if (depth > kMaxDepth) return makeError(ErrorCode::kInvalidArgument, "linked folders loop at " + from.string());
    fs::create_directories(to, error);
    if (error) return makeError(ErrorCode::kIo, "cannot create " + to.string() + ": " + error.message());
    for (fs::directory_iterator it(from, fs::directory_options::skip_permission_denied, error), end; it != end;
         it.increment(error)) {
      if (error) break;
      if (++entries_ > kMaxEntries) {
        return makeError(ErrorCode::kInvalidArgument, "the job's folder " + root_.string() + " holds more than 20000 entries");
      }
      const fs::path& path = it->path();
      const fs::path target = to / path.filename();
      if (it->is_directory(error)) {
        if (skippedFolder(path)) continue;
        if (it->is_symlink(error) && !holdsPython(path)) {
          fs::create_symlink(path, target, error);
        } else if (auto copied = copy(path, target, depth + 1); !copied) {
          return copied;
        }
      } else if (path.extension() == ".py" && it->is_regular_file(error)) {
        fs::copy_file(path, target, fs::copy_options::overwrite_existing, error);
      } else {
        fs::create_symlink(path, target, error);
      }
      if (error) return makeError(ErrorCode::kIo, "cannot copy " + path.string() + ": " + error.message());
    }
    if (error) return makeError(ErrorCode::kIo, "cannot read " + from.string() + ": " + error.message());
    return {};
  }

 private:
  fs::path root_;
  std::size_t entries_ = 0;
};

}  // namespace

Result<void> copyJobTree(const JobLayout& job, const fs::path& destination) {
  const fs::path root = job.sourceRoot();
  return TreeCopy(root).copy(root, destination, 0);
}

std::vector<fs::path> pythonFiles(const fs::path& root) {
  std::vector<fs::path> files;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(root, error); !error && it != fs::recursive_directory_iterator();
       it.increment(error)) {
    if (it->is_symlink(error)) continue;
    if (it->is_regular_file(error) && it->path().extension() == ".py") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

fs::path inCopy(const JobLayout& job, const fs::path& copy_root, const fs::path& user_path) {
  std::error_code error;
  const fs::path relative = fs::relative(user_path, job.sourceRoot(), error);
  if (error || relative.empty() || *relative.begin() == "..") return copy_root;
  return relative == "." ? copy_root : copy_root / relative;
}

Result<std::vector<WrittenFile>> writeBack(const JobLayout& job, const fs::path& copy_root) {
  std::vector<WrittenFile> written;
  for (const fs::path& fixed : pythonFiles(inCopy(job, copy_root, job.rewriteRoot()))) {
    std::error_code error;
    const fs::path user = job.sourceRoot() / fs::relative(fixed, copy_root, error);
    const std::string fixed_text = readTextFile(fixed.string());
    if (error || !fs::exists(user) || readTextFile(user.string()) == fixed_text) continue;
    fs::path backup = user.string() + ".torchscope.bak";
    for (int n = 1; fs::exists(backup); ++n) backup = user.string() + ".torchscope.bak." + std::to_string(n);
    fs::copy_file(user, backup, error);
    if (error) return makeError(ErrorCode::kIo, "cannot back up " + user.string() + ": " + error.message());
    // Written beside the file (a symlink's target) and renamed into place, so that a crash mid-write leaves the
    // old file or the new one, never a truncated one; the file keeps its permissions.
    if (auto replaced = store::replaceFile(user.string(), fixed_text); !replaced) return replaced.error();
    written.push_back({user.string(), backup.string()});
  }
  return written;
}

}  // namespace torchscope::compiler
