#include "LiveStatus.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <ostream>

#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::cli {

namespace {

constexpr auto kLookEvery = std::chrono::milliseconds(500);

std::string elapsedText(std::chrono::system_clock::duration elapsed) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
  return seconds >= 60 ? fmt::format("{}m{:02d}s", seconds / 60, seconds % 60) : fmt::format("{}s", seconds);
}

std::string counted(std::int64_t count, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

struct Progress {
  std::int64_t steps = 0;
  std::vector<store::Compile> compiles;
};

// What one store holds so far; nothing before it exists or while it is an earlier run's (until the job replaces it).
std::optional<Progress> progressOf(const std::string& store_path, std::int64_t started_ns) {
  auto reader = store::Reader::open(store_path);
  if (!reader) return std::nullopt;
  const auto run = (*reader)->run();
  if (!run || run->start_wall_ns < started_ns) return std::nullopt;
  Progress progress;
  // Steps are only ever added, so the largest rowid is their count without a scan of the table.
  (void)(*reader)->query("SELECT coalesce(max(rowid), 0) FROM steps",
                         [&](const store::Row& row) { progress.steps = row.integer(0); });
  if (auto compiles = (*reader)->load<store::Compile>()) progress.compiles = std::move(*compiles);
  return progress;
}

// "12 steps, 3 compilations (41.2 s)" from the rows committed so far; "" before the job's store exists. A launcher's
// job (torchrun) reads its ranks' stores beside its own: "2 ranks, 12 steps (the slowest rank's), ...". Compile time
// as `advise` counts it (analyzer::compileWallSeconds: the process that compiled longest).
std::string soFar(const std::string& store_path, std::chrono::system_clock::time_point started) {
  if (store_path.empty()) return "";
  const auto started_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(started.time_since_epoch()).count();
  std::vector<Progress> ranks;
  for (const std::string& rank_store : store::companionStores(store_path)) {
    if (store::rankInStoreName(std::filesystem::path(rank_store).filename().string()) < 0) continue;
    if (auto progress = progressOf(rank_store, started_ns)) ranks.push_back(std::move(*progress));
  }
  const auto own = progressOf(store_path, started_ns);
  if (!own && ranks.empty()) return "";
  std::int64_t steps = own ? own->steps : 0;
  std::vector<store::Compile> compiles = own ? own->compiles : std::vector<store::Compile>{};
  if (!ranks.empty()) steps = ranks.front().steps;
  for (const Progress& rank : ranks) {
    steps = std::min(steps, rank.steps);
    compiles.insert(compiles.end(), rank.compiles.begin(), rank.compiles.end());
  }
  std::string text = counted(steps, "step", "steps");
  if (!ranks.empty())
    text = fmt::format("{}, {} (the slowest rank's)", counted(static_cast<std::int64_t>(ranks.size()), "rank", "ranks"),
                       text);
  if (!compiles.empty()) {
    text += fmt::format(", {} ({:.1f} s)",
                        counted(static_cast<std::int64_t>(compiles.size()), "compilation", "compilations"),
                        analyzer::compileWallSeconds(compiles));
  }
  return text;
}

int terminalColumns() {
  winsize size{};
  return ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 80;
}

void writeToStderr(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

bool LiveStatus::onTerminal() {
  const char* term = std::getenv("TERM");
  return isatty(STDERR_FILENO) != 0 && (term == nullptr || std::strcmp(term, "dumb") != 0);
}

LiveStatus::LiveStatus(std::string prefix, bool shown) : prefix_(std::move(prefix)), shown_(shown) {
  if (shown_) thread_ = std::thread([this] { loop(); });
}

LiveStatus::~LiveStatus() {
  if (!shown_) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    clear();
  }
  wake_.notify_all();
  thread_.join();
}

void LiveStatus::watch(const std::string& label, const std::string& store_path,
                       std::chrono::system_clock::time_point started) {
  if (!shown_) return;
  std::lock_guard lock(mutex_);
  jobs_.push_back({label, store_path, started, ""});
  draw();
}

void LiveStatus::forget(const std::string& label) {
  if (!shown_) return;
  std::lock_guard lock(mutex_);
  std::erase_if(jobs_, [&](const Job& job) { return job.label == label; });
  draw();
}

void LiveStatus::print(std::ostream& out, const std::string& line) {
  std::unique_lock lock(mutex_, std::defer_lock);
  if (shown_) {
    lock.lock();
    clear();
  }
  out << line << "\n" << std::flush;
  if (shown_) draw();
}

void LiveStatus::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    lookAtStores();
    lock.lock();
    if (stopping_) break;
    draw();
    wake_.wait_for(lock, kLookEvery, [this] { return stopping_; });
  }
}

void LiveStatus::lookAtStores() {
  std::vector<Job> looked;
  {
    std::lock_guard lock(mutex_);
    looked = jobs_;
  }
  // Read without the lock: print() never waits on a store.
  for (Job& job : looked) job.so_far = soFar(job.store_path, job.started);
  std::lock_guard lock(mutex_);
  for (const Job& seen : looked) {
    for (Job& job : jobs_) {
      if (job.label == seen.label && !seen.so_far.empty()) job.so_far = seen.so_far;
    }
  }
}

void LiveStatus::draw() {
  if (jobs_.empty()) {
    clear();
    return;
  }
  const auto now = std::chrono::system_clock::now();
  std::string line = prefix_ + ":";
  for (const Job& job : jobs_) {
    line += job.label.empty() ? " " : fmt::format(" {} ", job.label);
    line += elapsedText(now - job.started) + ", " + (job.so_far.empty() ? "starting" : job.so_far);
    if (&job != &jobs_.back()) line += " |";
  }
  // One terminal row, or the \r would rewrite only its last part.
  const auto columns = static_cast<std::size_t>(std::max(terminalColumns() - 1, 10));
  if (line.size() > columns) line.resize(columns);
  // Rewritten from the start of the row, the rest of the row erased, and the cursor left at the start: a line the
  // job itself prints to the terminal (a training loop's log, longer than this one) then takes the row over instead
  // of following the status on it, and the next look draws the status on the row below.
  writeToStderr("\r" + line + "\x1b[K\r");
  on_screen_ = true;
}

void LiveStatus::clear() {
  if (!on_screen_) return;
  writeToStderr("\r\x1b[K");
  on_screen_ = false;
}

}  // namespace torchscope::cli
