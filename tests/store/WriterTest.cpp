// The writer under load, concurrency, crashes and failing disks.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "torchscope/store/Reader.h"
#include "torchscope/store/Writer.h"
#include "torchscope/testing/TempDir.h"
#include "torchscope/testing/Threads.h"

namespace torchscope::store {
namespace {

Kernel kernel(std::int64_t i, std::int64_t thread = 0) {
  Kernel k;
  k.pid = thread;
  k.device = 0;
  k.stream = 7;
  k.start_ns = i * 10;
  k.end_ns = i * 10 + 5;
  k.name = "void gemm_kernel<" + std::to_string(i % 50) + ">";
  k.correlation_id = i;
  return k;
}

std::int64_t countOf(const std::string& path, const std::string& table) {
  auto reader = Reader::open(path);
  if (!reader) return -1;
  auto counts = (*reader)->counts();
  return counts ? counts->at(table) : -1;
}

TEST(Writer, OneMillionEventsComeBack) {
  testing::TempDir dir;
  const std::string path = dir.file("big.db");
  constexpr std::int64_t kEvents = 1'000'000;
  {
    auto writer = Writer::open(path);
    ASSERT_TRUE(writer);
    for (std::int64_t i = 0; i < kEvents; ++i) (*writer)->add(kernel(i));
    ASSERT_TRUE((*writer)->close());
    EXPECT_EQ((*writer)->stats().written, static_cast<std::uint64_t>(kEvents));
    EXPECT_EQ((*writer)->stats().dropped, 0u);
  }
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader);
  auto rows = (*reader)->load<Kernel>();
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), static_cast<std::size_t>(kEvents));
  for (std::int64_t i = 0; i < kEvents; i += 99'991) EXPECT_EQ((*rows)[static_cast<std::size_t>(i)], kernel(i));
  std::int64_t distinct_names = -1;
  ASSERT_TRUE((*reader)->query("SELECT count(*) FROM strings", [&](const Row& r) { distinct_names = r.integer(0); }));
  EXPECT_EQ(distinct_names, 50) << "kernel names are interned once each";
}

TEST(Writer, EightThreadsWriteAtOnce) {
  testing::TempDir dir;
  const std::string path = dir.file("threads.db");
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20'000;
  {
    WriterOptions options;
    options.memory_budget_bytes = 512 * 1024;  // small queue: producers really contend and wait
    auto writer = Writer::open(path, options);
    ASSERT_TRUE(writer);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          (*writer)->add(kernel(i, t));
          if (i % 5000 == 0) (*writer)->add(Step{t, t, i, i, i + 1, "marker"});
        }
      });
    }
    for (auto& thread : threads) thread.join();
    ASSERT_TRUE((*writer)->close());
    EXPECT_EQ((*writer)->stats().dropped, 0u);
  }
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader);
  for (int t = 0; t < kThreads; ++t) {
    std::int64_t rows = 0, sum = 0;
    ASSERT_TRUE((*reader)->query("SELECT count(*), sum(correlation_id) FROM kernels WHERE pid = ?",
                                 [&](const Row& r) { rows = r.integer(0), sum = r.integer(1); },
                                 {std::int64_t{t}}));
    EXPECT_EQ(rows, kPerThread);
    EXPECT_EQ(sum, static_cast<std::int64_t>(kPerThread) * (kPerThread - 1) / 2);
  }
  EXPECT_EQ(countOf(path, "steps"), kThreads * 4);
}

// Each wake-up of the writer's thread costs the job's machine a context switch (about 60 us of CPU on the development
// VM): with nothing queued (a closed capture window) it sleeps until a record comes, and commits that record a flush
// interval later as ever, without a flush().
TEST(Writer, SleepsWhileNothingIsQueuedAndCommitsTheNextRecordWithinAnInterval) {
  using namespace std::chrono_literals;
  testing::TempDir dir;
  const std::string path = dir.file("idle.db");
  auto writer = Writer::open(path);
  ASSERT_TRUE(writer);
  std::this_thread::sleep_for(300ms);  // its first interval finds nothing queued
  const std::int64_t idle_from = testing::wakeUpsOf("torchscope-wr");
  ASSERT_GE(idle_from, 0);
  std::this_thread::sleep_for(500ms);
  EXPECT_LE(testing::wakeUpsOf("torchscope-wr") - idle_from, 1) << "a 100 ms flush interval woke it 5 times in 500 ms";
  (*writer)->add(kernel(1));
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (countOf(path, "kernels") < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(countOf(path, "kernels"), 1);
  EXPECT_EQ((*writer)->stats().batches, 1u);
  ASSERT_TRUE((*writer)->close());
  EXPECT_TRUE(testing::threadGone("torchscope-wr")) << "closed: the thread is gone";
}

TEST(Writer, FileIsReadableWhileWritten) {
  testing::TempDir dir;
  const std::string path = dir.file("live.db");
  auto writer = Writer::open(path);
  ASSERT_TRUE(writer);
  for (int i = 0; i < 1000; ++i) (*writer)->add(kernel(i));
  (*writer)->flush();
  EXPECT_EQ(countOf(path, "kernels"), 1000);
  for (int i = 0; i < 500; ++i) (*writer)->add(kernel(i));
  (*writer)->flush();
  EXPECT_EQ(countOf(path, "kernels"), 1500);
  ASSERT_TRUE((*writer)->close());
}

// A reader that looks at the live store again and again (as `torchscope run`'s status line does, only far more
// often) neither loses rows nor keeps the closed store in WAL mode: the switch to a single file, which an open reader
// blocks, waits for a gap.
TEST(Writer, ClosesToOneFileWhileAReaderKeepsLooking) {
  testing::TempDir dir;
  const std::string path = dir.file("looked_at.db");
  auto writer = Writer::open(path);
  ASSERT_TRUE(writer);
  std::atomic<bool> looking{true};
  std::atomic<int> looks{0};
  // Each look keeps the store open for 2 ms more than its reading takes (a look at a large store), then leaves it
  // alone for as long as the look took (at least 1 ms): under a sanitizer a look takes far longer, and the gaps
  // with it, so the test asks the same of every build.
  std::thread reader([&] {
    while (looking) {
      const auto start = std::chrono::steady_clock::now();
      if (auto open = Reader::open(path); open && (*open)->counts()) {
        ++looks;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      const auto took = std::chrono::steady_clock::now() - start;
      std::this_thread::sleep_for(std::max<std::chrono::steady_clock::duration>(took, std::chrono::milliseconds(1)));
    }
  });
  for (int i = 0; i < 20000; ++i) (*writer)->add(kernel(i));
  while (looks < 20) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto closed = (*writer)->close();
  looking = false;
  reader.join();
  ASSERT_TRUE(closed) << closed.error().message;
  EXPECT_EQ(countOf(path, "kernels"), 20000);
  struct stat wal {};
  EXPECT_NE(stat((path + "-wal").c_str(), &wal), 0) << "the closed store is still in WAL mode";
}

TEST(Writer, DropPolicyCountsWhatItLoses) {
  testing::TempDir dir;
  const std::string path = dir.file("drop.db");
  WriterOptions options;
  options.overflow = OverflowPolicy::kDrop;
  options.memory_budget_bytes = 0;  // the smallest budget
  options.flush_interval = std::chrono::milliseconds(10'000);  // nothing drains the queue during the burst
  auto writer = Writer::open(path, options);
  ASSERT_TRUE(writer);
  constexpr int kBurst = 100'000;
  for (int i = 0; i < kBurst; ++i) (*writer)->add(kernel(i));
  const auto before_close = (*writer)->stats();
  ASSERT_TRUE((*writer)->close());
  const auto stats = (*writer)->stats();
  EXPECT_GT(before_close.dropped, 0u);
  EXPECT_EQ(stats.written + stats.dropped, static_cast<std::uint64_t>(kBurst));
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader);
  auto diagnostics = (*reader)->load<Diagnostic>();
  ASSERT_TRUE(diagnostics);
  ASSERT_EQ(diagnostics->size(), 1u);
  EXPECT_EQ((*diagnostics)[0].count, static_cast<std::int64_t>(stats.dropped));
  EXPECT_EQ(countOf(path, "kernels"), static_cast<std::int64_t>(stats.written));
}

// Producers far faster than SQLite, with kernel names longer than std::string's own buffer: the
// queue fills up to its budget and no further, whether it drops or makes the producers wait, and
// every record is either stored or counted as dropped.
TEST(Writer, QueueStaysWithinItsBudget) {
  constexpr int kThreads = 2;
  constexpr int kPerThread = 50'000;
  for (const OverflowPolicy policy : {OverflowPolicy::kDrop, OverflowPolicy::kBlock}) {
    testing::TempDir dir;
    const std::string path = dir.file("budget.db");
    WriterOptions options;
    options.overflow = policy;
    options.memory_budget_bytes = 1 << 20;
    auto writer = Writer::open(path, options);
    ASSERT_TRUE(writer);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          Kernel k = kernel(i, t);
          k.name += std::string(200, 'x');
          (*writer)->add(std::move(k));
        }
      });
    }
    for (auto& thread : threads) thread.join();
    ASSERT_TRUE((*writer)->close());
    const auto stats = (*writer)->stats();
    EXPECT_EQ(stats.queue_budget_bytes, 768u * 1024) << "the budget less SQLite's page cache (a quarter)";
    EXPECT_GT(stats.queue_peak_bytes, 0u);
    EXPECT_LE(stats.queue_peak_bytes, stats.queue_budget_bytes);
    EXPECT_EQ(stats.written + stats.dropped, static_cast<std::uint64_t>(kThreads * kPerThread));
    if (policy == OverflowPolicy::kBlock) {
      EXPECT_EQ(stats.dropped, 0u);
    }
    EXPECT_EQ(countOf(path, "kernels"), static_cast<std::int64_t>(stats.written));
  }
}

TEST(Writer, AppendKeepsRowsAndInternedStrings) {
  testing::TempDir dir;
  const std::string path = dir.file("append.db");
  {
    auto writer = Writer::open(path);
    ASSERT_TRUE(writer);
    (*writer)->add(kernel(1));
    ASSERT_TRUE((*writer)->close(100));
  }
  {
    WriterOptions options;
    options.mode = OpenMode::kAppend;
    auto writer = Writer::open(path, options);
    ASSERT_TRUE(writer) << writer.error().message;
    (*writer)->add(kernel(1));  // same name: must reuse the interned string
    (*writer)->add(Finding{"sync/item", "warning", "t", "m", "train.py", 3, "f", 1, 0.5, 0.1, "{}", "x", "y", "source"});
    ASSERT_TRUE((*writer)->close());
  }
  EXPECT_EQ(countOf(path, "kernels"), 2);
  EXPECT_EQ(countOf(path, "findings"), 1);
  EXPECT_EQ(countOf(path, "strings"), 1);
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader);
  auto run = (*reader)->run();
  ASSERT_TRUE(run);
  EXPECT_EQ(run->end_ns, 100) << "appending without an end time keeps the run's end";
}

// A writer killed with SIGKILL mid-run leaves a file that opens with every committed batch.
TEST(Writer, SigkillKeepsCommittedBatches) {
  testing::TempDir dir;
  const std::string path = dir.file("killed.db");
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    auto writer = Writer::open(path);
    if (!writer) _exit(3);
    for (std::int64_t batch = 0;; ++batch) {
      for (std::int64_t i = 0; i < 1000; ++i) (*writer)->add(kernel(batch * 1000 + i));
      (*writer)->flush();
      const std::int64_t committed = (batch + 1) * 1000;
      if (write(pipe_fds[1], &committed, sizeof committed) != sizeof committed) _exit(4);
      for (std::int64_t i = 0; i < 700; ++i) (*writer)->add(kernel(-i));  // in flight when killed
    }
  }
  close(pipe_fds[1]);
  std::int64_t committed = 0, value = 0;
  while (committed < 20'000 && read(pipe_fds[0], &value, sizeof value) == sizeof value) committed = value;
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  waitpid(child, &status, 0);
  while (read(pipe_fds[0], &value, sizeof value) == sizeof value) committed = value;
  close(pipe_fds[0]);
  ASSERT_TRUE(WIFSIGNALED(status));

  auto reader = Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message;
  std::int64_t complete_batches_rows = 0;
  ASSERT_TRUE((*reader)->query("SELECT count(*) FROM kernels WHERE correlation_id >= 0",
                               [&](const Row& r) { complete_batches_rows = r.integer(0); }));
  EXPECT_GE(complete_batches_rows, committed);
  auto run = (*reader)->run();
  ASSERT_TRUE(run);
  EXPECT_EQ(run->end_ns, -1) << "a killed run has no end: readers treat it as partial";
}

// A full disk stops the writer with an error and counts the loss; the process carries on.
TEST(Writer, FullDiskIsReportedNotFatal) {
  testing::TempDir dir;
  const std::string path = dir.file("full.db");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    auto writer = Writer::open(path);
    if (!writer) _exit(3);
    rlimit limit{512 * 1024, 512 * 1024};  // the file may not grow past 512 KiB: writes fail with EFBIG
    setrlimit(RLIMIT_FSIZE, &limit);
    for (std::int64_t i = 0; i < 200'000; ++i) (*writer)->add(kernel(i));
    auto closed = (*writer)->close();
    const auto stats = (*writer)->stats();
    if (closed) _exit(5);                          // the failure must be reported
    if (stats.dropped == 0) _exit(6);              // and the loss counted
    if (stats.last_error.empty()) _exit(7);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the writer crashed on a full disk";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message;
  EXPECT_GE(countOf(path, "kernels"), 0);
}

// A store holds command lines and source paths: owner-only, whatever the umask allows.
TEST(Writer, StoreIsReadableByItsOwnerOnly) {
  testing::TempDir dir;
  const std::string path = dir.file("private.db");
  const mode_t previous_umask = umask(0);
  auto writer = Writer::open(path);
  umask(previous_umask);
  ASSERT_TRUE(writer) << writer.error().message;
  (*writer)->add(kernel(1));
  (*writer)->flush();
  for (const std::string& file : {path, path + "-wal"}) {
    struct stat info {};
    ASSERT_EQ(stat(file.c_str(), &info), 0) << file;
    EXPECT_EQ(info.st_mode & 0777, 0600u) << file;
  }
  ASSERT_TRUE((*writer)->close());
}

// A symlink planted at the temporary name (a shared, writable directory) is not written through.
TEST(Writer, SymlinkAtTheTemporaryNameIsNotFollowed) {
  testing::TempDir dir;
  const std::string path = dir.file("job.db");
  const std::string victim = dir.file("victim.txt");
  std::ofstream(victim) << "keep me";
  const std::string planted = path + ".creating-" + std::to_string(getpid());
  ASSERT_EQ(symlink(victim.c_str(), planted.c_str()), 0);

  auto writer = Writer::open(path);
  ASSERT_TRUE(writer) << writer.error().message;
  ASSERT_TRUE((*writer)->close());
  std::stringstream content;
  content << std::ifstream(victim).rdbuf();
  EXPECT_EQ(content.str(), "keep me");
  struct stat info {};
  EXPECT_EQ(lstat(planted.c_str(), &info), -1) << "the temporary name is renamed away";
  EXPECT_EQ(countOf(path, "kernels"), 0);
}

}  // namespace
}  // namespace torchscope::store
