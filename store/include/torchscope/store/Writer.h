// Writer: appends records to a store from any thread. A background thread owns the SQLite
// connection and commits what was queued in batched transactions (WAL), every
// `flush_interval` or sooner when the queue fills, so a crash loses at most about one
// interval; after an interval with nothing queued the thread sleeps until the next record
// comes. Indexes are built when the run closes. The file is readable while it is written.
//
// Memory: records wait in a queue bounded by WriterOptions::memory_budget_bytes together with
// SQLite's page cache; closing builds the indexes with temporary files on disk, not in memory.
//
// Error contract: add() never throws and never blocks for I/O; with OverflowPolicy::kDrop a full
// queue drops the record and counts it. A failing disk (SQLITE_FULL, I/O errors) stops writing,
// counts what is lost from then on and reports it in stats(); it never crashes the host process.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "torchscope/base/Result.h"
#include "torchscope/store/Records.h"

namespace torchscope::store {

enum class OverflowPolicy {
  kBlock,  // producers wait for the writer thread (tools, importers)
  kDrop,   // producers never wait; the record is dropped and counted (the collector)
};

enum class OpenMode {
  kCreate,           // a new store; an existing file at the path is replaced
  kAppend,           // add rows to an existing store (findings, fix experiments)
  kReplaceFindings,  // kAppend, once the store's findings are deleted: the ones added replace them
};

inline constexpr std::size_t kDefaultMemoryBudgetBytes = std::size_t{64} << 20;

struct WriterOptions {
  OpenMode mode = OpenMode::kCreate;
  OverflowPolicy overflow = OverflowPolicy::kBlock;
  // The most memory the writer holds for records: SQLite's page cache (a quarter, at most 16 MiB)
  // and the queue (the rest: records waiting plus the batch being committed). A full queue drops
  // or waits, by `overflow`.
  std::size_t memory_budget_bytes = kDefaultMemoryBudgetBytes;
  std::chrono::milliseconds flush_interval{100};
};

struct WriterStats {
  std::uint64_t written = 0;   // records committed
  std::uint64_t dropped = 0;   // records lost to a full queue or a failed disk
  std::uint64_t batches = 0;   // transactions committed
  std::string last_error;      // empty while healthy
  std::uint64_t queue_budget_bytes = 0;  // the queue's share of the budget
  std::uint64_t queue_peak_bytes = 0;    // the most the queue held
  std::uint64_t lock_waits = 0;          // add() calls that found the queue's lock taken
  std::int64_t longest_lock_wait_ns = 0;  // the longest of those waits (descheduling included)
};

// For a signal handler that waits for another thread to close a writer (the collector's SIGTERM
// handler): the close needs the queue's lock, so the wait could never end on a thread interrupted
// while it holds that lock inside add() or setRun() (with OverflowPolicy::kBlock, also while add()
// waits for room). Both calls are async-signal-safe.
// Whether the calling thread is inside add() or setRun() of a writer.
[[nodiscard]] bool callingThreadIsInsideAWriter() noexcept;
// Raises `signal_number` again on the calling thread as soon as it leaves that call.
void raiseWhenLeavingTheWriter(int signal_number) noexcept;

class Writer {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Writer>> open(const std::string& path, WriterOptions options = {});
  ~Writer();  // close() if not closed yet
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void setRun(const RunInfo& run);
  // Queues a record of any table but the run's (RowRecords).
  template <RowRecord T>
  void add(T record) {
    enqueue(schema::IndexOf<T, RowRecords>::value, &record);
  }

  // Blocks until everything added before the call is committed (or lost to an error).
  void flush();
  // Commits the rest, records drop counts, sets run.end_ns when end_ns >= 0, builds the indexes
  // and stops the thread. Safe to call twice.
  Result<void> close(base::Nanos end_ns = -1);
  // Stops the background thread without writing anything more: for a forked child that must
  // not touch its parent's store.
  void abandon();

  [[nodiscard]] WriterStats stats() const;
  [[nodiscard]] const std::string& path() const;

  class Impl;

 private:
  explicit Writer(std::unique_ptr<Impl> impl);
  // Moves *record, a record of RowRecords' type number `type`, into the queue.
  void enqueue(std::size_t type, void* record);
  std::unique_ptr<Impl> impl_;
};

}  // namespace torchscope::store
