#include "torchscope/store/Writer.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "RecordQueue.h"
#include "Sqlite.h"
#include "StoreFile.h"
#include "torchscope/store/Files.h"
#include "Tables.h"
#include "torchscope/store/Schema.h"

namespace torchscope::store {

namespace {

// Rows per multi-row INSERT: a batch's records go kRowsPerInsert to a statement, the rest one by
// one. One sqlite3_step then runs the statement's program for many rows, which costs SQLite about a
// third fewer instructions per row than a step per row (docs/performance.md, *Store ingest*).
constexpr int kRowsPerInsert = 64;

// The prepared INSERTs for one record type, made on first use: one row, and kRowsPerInsert rows.
template <class T>
struct InsertStatement {
  sqlite::Statement stmt;
  sqlite::Statement many;
};
template <class Tuple>
struct StatementsOf;
template <class... Ts>
struct StatementsOf<std::tuple<Ts...>> {
  using type = std::tuple<InsertStatement<Ts>...>;
};

// Maps text to its row in `strings`, inserting new text inside the current transaction.
class Interner {
 public:
  Result<void> load(sqlite::Database& db) {
    auto stmt = db.prepare("SELECT id, value FROM strings");
    if (!stmt) return stmt.error();
    while (stmt->step() == SQLITE_ROW) ids_.emplace(stmt->columnText(1), stmt->columnInt(0));
    return {};
  }

  Result<std::int64_t> id(sqlite::Database& db, const std::string& text) {
    if (auto it = ids_.find(text); it != ids_.end()) return it->second;
    if (!insert_.get()) {
      auto stmt = db.prepare("INSERT INTO strings (value) VALUES (?)");
      if (!stmt) return stmt.error();
      insert_ = std::move(*stmt);
    }
    insert_.bind(1, std::string_view(text));
    const int rc = insert_.step();
    insert_.reset();
    if (rc != SQLITE_DONE) return db.error("cannot intern a string", rc);
    const std::int64_t id = sqlite3_last_insert_rowid(db.get());
    ids_.emplace(text, id);
    return id;
  }

  void clear() { ids_.clear(); }

 private:
  std::unordered_map<std::string, std::int64_t> ids_;
  sqlite::Statement insert_;
};

void bindField(sqlite::Statement& stmt, int index, std::int64_t value) { stmt.bindIfChanged(index, value); }
void bindField(sqlite::Statement& stmt, int index, double value) { stmt.bind(index, value); }
void bindField(sqlite::Statement& stmt, int index, bool value) { stmt.bindIfChanged(index, value ? 1 : 0); }
void bindField(sqlite::Statement& stmt, int index, const std::string& value) {
  stmt.bind(index, std::string_view(value));
}

// Binds the row's columns to the parameters from `index` on.
template <class T>
Result<void> bindRow(sqlite::Database& db, sqlite::Statement& stmt, int index, const T& row, Interner& interner) {
  std::optional<Error> failure;
  auto bindColumn = [&](const auto& column) {
    const auto& value = row.*(column.member);
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
      if (column.interned()) {
        auto id = interner.id(db, value);
        if (!id) {
          failure = id.error();
          return;
        }
        stmt.bindIfChanged(index++, *id);
        return;
      }
    }
    bindField(stmt, index++, value);
  };
  std::apply([&](const auto&... column) { (bindColumn(column), ...); }, tables::kColumns<T>);
  if (failure) return *failure;
  return {};
}

// How many add()/setRun() calls the thread is inside, and a signal that arrived meanwhile and waits
// for the last of them to end. initial-exec: read by signal handlers, so never allocated lazily.
[[gnu::tls_model("initial-exec")]] thread_local volatile std::sig_atomic_t t_producer_calls = 0;
[[gnu::tls_model("initial-exec")]] thread_local volatile std::sig_atomic_t t_deferred_signal = 0;

// Marks a producer's call for callingThreadIsInsideAWriter(); declared before the queue's lock, so
// the lock is released before a deferred signal is raised.
class ProducerCall {
 public:
  ProducerCall() { t_producer_calls = t_producer_calls + 1; }
  ~ProducerCall() {
    t_producer_calls = t_producer_calls - 1;
    if (t_producer_calls != 0 || t_deferred_signal == 0) return;
    const int signal_number = t_deferred_signal;
    t_deferred_signal = 0;
    ::raise(signal_number);
  }
  ProducerCall(const ProducerCall&) = delete;
  ProducerCall& operator=(const ProducerCall&) = delete;
};

// Below this, a budget would not hold a block for each record type.
constexpr std::size_t kSmallestMemoryBudget = 256 * 1024;

// SQLite's page cache: a quarter of the budget, at most 16 MiB; the queue has the rest.
std::size_t pageCacheBytes(std::size_t budget_bytes) {
  return std::min<std::size_t>(budget_bytes / 4, std::size_t{16} << 20);
}

std::string cacheSizePragma(std::size_t bytes) { return "PRAGMA cache_size = -" + std::to_string(bytes / 1024); }

}  // namespace

class Writer::Impl {
 public:
  Impl(std::string path, WriterOptions options, sqlite::Database db)
      : path_(std::move(path)),
        options_(options),
        db_(std::move(db)),
        queue_(options.memory_budget_bytes - pageCacheBytes(options.memory_budget_bytes)) {}

  Result<void> start() {
    if (options_.mode != OpenMode::kCreate) {
      if (auto loaded = interner_.load(db_); !loaded) return loaded.error();
    }
    if (options_.mode == OpenMode::kReplaceFindings) {
      if (auto deleted = db_.exec("DELETE FROM findings"); !deleted) return deleted.error();
    }
    // The writer thread takes none of the host's asynchronous signals: a SIGTERM handler run
    // on it could wait for a close() that needs this very thread.
    sigset_t all_signals, previous;
    sigfillset(&all_signals);
    pthread_sigmask(SIG_BLOCK, &all_signals, &previous);
    thread_ = std::thread([this] { run(); });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return {};
  }

  template <class T>
  void enqueue(T&& record) {
    const ProducerCall call;
    std::unique_lock lock = lockQueue();
    if (failed_ || closing_) {
      ++dropped_;
      return;
    }
    if (!queue_.makeRoom(record)) {
      if (options_.overflow == OverflowPolicy::kDrop) {
        ++dropped_;
        return;
      }
      wake_.notify_one();
      // A record larger than the whole budget passes alone, once the queue is empty.
      space_.wait(lock, [&] { return queue_.makeRoom(record) || queue_.idle() || failed_; });
      if (failed_) {
        ++dropped_;
        return;
      }
    }
    queue_.push(std::forward<T>(record));
    ++enqueued_;
    wakeIfIdle();
    if (!commit_requested_ && queue_.pendingBytes() >= earlyCommitBytes()) {
      commit_requested_ = true;
      wake_.notify_one();
    }
  }

  void setRun(const RunInfo& run) {
    const ProducerCall call;
    std::lock_guard lock(mutex_);
    pending_run_ = run;
    ++enqueued_;
    wakeIfIdle();
  }

  void flush() {
    std::unique_lock lock(mutex_);
    if (!thread_.joinable()) return;
    const std::uint64_t target = enqueued_;
    flush_target_ = std::max(flush_target_, target);
    wake_.notify_one();
    done_.wait(lock, [&] { return committed_ >= target || failed_ || stopped_; });
  }

  Result<void> close(base::Nanos end_ns) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return {};
      closed_ = true;
      closing_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable()) thread_.join();
    return finish(end_ns);
  }

  WriterStats stats() const {
    std::lock_guard lock(mutex_);
    return WriterStats{written_,  dropped_,   batches_, last_error_, queue_.budgetBytes(), queue_.peakBytes(),
                       lock_waits_, longest_lock_wait_ns_};
  }

  const std::string& path() const { return path_; }

 private:
  // Commit before the interval ends once the records waiting take a quarter of the queue: keeps
  // transactions short and leaves producers the rest while a batch is written.
  std::size_t earlyCommitBytes() const { return queue_.budgetBytes() / 4; }

  // The queue's lock, counting the producers that had to wait for it (the writer thread holds it
  // only to hand a batch over and to take its blocks back).
  // The first record after an interval with none wakes the writer thread, which then waits a flush interval for more
  // (run()). Needs mutex_.
  void wakeIfIdle() {
    if (!idle_) return;
    idle_ = false;
    wake_.notify_one();
  }

  std::unique_lock<std::mutex> lockQueue() {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (lock.owns_lock()) return lock;
    const auto before = std::chrono::steady_clock::now();
    lock.lock();
    const auto waited = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - before);
    ++lock_waits_;
    longest_lock_wait_ns_ = std::max<std::int64_t>(longest_lock_wait_ns_, waited.count());
    return lock;
  }

  void run() {
    pthread_setname_np(pthread_self(), "torchscope-wr");  // its CPU is told apart from the job's (bench/, top -H)
    std::unique_lock lock(mutex_);
    const auto due = [&] {
      return closing_ || flush_target_ > committed_ || queue_.pendingBytes() >= earlyCommitBytes();
    };
    while (true) {
      // After an interval with nothing to commit (a closed capture window, a job between phases) the thread sleeps
      // until a record comes: a wake-up a flush interval for nothing cost about 60 us of CPU each on a VM
      // (docs/performance.md, *Collector*).
      if (idle_) wake_.wait(lock, [&] { return !idle_ || due(); });
      wake_.wait_for(lock, options_.flush_interval, due);
      const bool stop = closing_;
      if (queue_.pendingRecords() > 0 || pending_run_) {
        queue_.takePending(batch_);
        commit_requested_ = false;
        const std::size_t count = batch_.size();
        auto run = std::move(pending_run_);
        pending_run_.reset();
        const std::uint64_t target = enqueued_;
        lock.unlock();
        auto committed = commit(batch_, run);
        batch_.destroyRecords();
        lock.lock();
        queue_.release(batch_);
        space_.notify_all();
        if (committed) {
          written_ += count;
          ++batches_;
        } else {
          dropped_ += count;
          last_error_ = committed.error().message;
          failed_ = true;
          space_.notify_all();
        }
        committed_ = target;
      } else {
        committed_ = enqueued_;
        idle_ = true;
      }
      done_.notify_all();
      if (stop) break;
    }
    stopped_ = true;
    done_.notify_all();
  }

  Result<void> commit(const Batch& batch, const std::optional<RunInfo>& run) {
    if (auto begun = db_.exec("BEGIN"); !begun) return begun;
    Result<void> result;
    if (run) result = writeRows(std::vector<RunInfo>{*run});
    batch.forEachList([&](const auto& rows) {
      if (result) result = writeRows(rows);
    });
    if (!result) {
      (void)db_.exec("ROLLBACK");
      interner_.clear();  // ids handed out in the rolled-back transaction are gone
      return result;
    }
    return db_.exec("COMMIT");
  }

  template <class T>
  Result<void> writeRows(const std::vector<T>& rows) {
    Result<void> result;
    for (const T& row : rows) {
      if (result) result = writeRow(row);
    }
    return result;
  }
  // The queued records of a type: kRowsPerInsert to a statement, in order, then the rest one by one.
  // Text is bound without a copy: the batch holds the records until the transaction is over.
  template <class T>
  Result<void> writeRows(const RecordBlocks<T>& rows) {
    const std::size_t in_statements = rows.size() - rows.size() % kRowsPerInsert;
    std::size_t written = 0;
    int bound_rows = 0;  // rows bound to the multi-row statement, not yet stepped
    Result<void> result;
    rows.forEach([&](const T& row) {
      if (!result) return;
      if (written++ >= in_statements) {
        result = writeRow(row);
        return;
      }
      auto many = statement<T>(&InsertStatement<T>::many, kRowsPerInsert);
      if (!many) {
        result = many.error();
        return;
      }
      result = bindRow(db_, **many, 1 + bound_rows * tables::columnCount<T>(), row, interner_);
      if (result && ++bound_rows == kRowsPerInsert) {
        result = step<T>(**many);
        bound_rows = 0;
      }
    });
    return result;
  }

  template <class T>
  Result<void> writeRow(const T& row) {
    auto stmt = statement<T>(&InsertStatement<T>::stmt, 1);
    if (!stmt) return stmt.error();
    if (auto bound = bindRow(db_, **stmt, 1, row, interner_); !bound) return bound;
    return step<T>(**stmt);
  }

  // The INSERT of `rows` rows for T, prepared on first use.
  template <class T>
  Result<sqlite::Statement*> statement(sqlite::Statement InsertStatement<T>::*which, int rows) {
    sqlite::Statement& stmt = std::get<InsertStatement<T>>(statements_).*which;
    if (!stmt.get()) {
      auto prepared = db_.prepare(tables::insertSql<T>(rows));
      if (!prepared) return prepared.error();
      stmt = std::move(*prepared);
    }
    return &stmt;
  }

  template <class T>
  Result<void> step(sqlite::Statement& stmt) {
    const int rc = stmt.step();
    stmt.reset();
    if (rc != SQLITE_DONE) {
      return db_.error(std::string("cannot write to ") + std::string(tables::Traits<T>::kTable), rc);
    }
    return {};
  }

  Result<void> finish(base::Nanos end_ns) {
    WriterStats totals = stats();
    if (!failed_) {
      std::vector<Diagnostic> lost;
      if (totals.dropped > 0) {
        lost.push_back({"store", "warning",
                        std::to_string(totals.dropped) + " records were dropped (queue full or write error)",
                        static_cast<std::int64_t>(totals.dropped)});
      }
      if (auto begun = db_.exec("BEGIN"); !begun) return begun;
      Result<void> result = writeRows(lost);
      if (result && end_ns >= 0) {
        result = db_.exec("UPDATE run SET end_ns = " + std::to_string(end_ns) + " WHERE id = 1");
      }
      if (!result) {
        (void)db_.exec("ROLLBACK");
        return result;
      }
      if (auto done = db_.exec("COMMIT"); !done) return done;
      {
        std::lock_guard lock(mutex_);
        queue_.releaseFreeBlocks();
      }
      // The index sorts keep about one page cache of rows in memory: half of it, with the page
      // cache halved, keeps the two within the cache's share of the budget.
      (void)db_.exec(cacheSizePragma(pageCacheBytes(options_.memory_budget_bytes) / 2));
      if (auto indexed = db_.exec(indexSql()); !indexed) return indexed;
      (void)db_.exec("PRAGMA optimize");
      // A closed store is one self-contained file. The switch needs the file to itself: a reader that looks at the
      // live store now and then (`torchscope run`'s status line) holds it for a moment, so try again for a while;
      // a reader that stays keeps the store in WAL mode, which is fine. SQLite deletes the -wal before it rewrites
      // the header's mode: the exclusive lock, once taken, keeps a reader from opening the store in between (it
      // would make a new -wal, and whoever opens the store next would take it for a WAL store again).
      (void)db_.exec("PRAGMA locking_mode = EXCLUSIVE");
      for (int attempt = 0; attempt < kJournalSwitchAttempts && !leaveWal(); ++attempt) {
        std::this_thread::sleep_for(kJournalSwitchPause);
      }
    }
    // Every statement goes before its connection: one left open keeps the connection, and the exclusive lock
    // above with it, alive until the writer is destroyed.
    statements_ = {};
    interner_ = Interner();
    db_ = sqlite::Database();
    if (!totals.last_error.empty()) {
      return makeError(ErrorCode::kIo, path_ + ": " + totals.last_error);
    }
    return {};
  }

  // True once the store is out of WAL mode (SQLite answers with the mode it is in, the old one when it cannot switch).
  bool leaveWal() {
    auto switched = db_.prepare("PRAGMA journal_mode = DELETE");
    return switched && switched->step() == SQLITE_ROW && switched->columnText(0) == "delete";
  }

  static constexpr int kJournalSwitchAttempts = 50;
  static constexpr std::chrono::milliseconds kJournalSwitchPause{10};

  std::string path_;
  WriterOptions options_;
  sqlite::Database db_;  // used by the writer thread only, then by finish()
  Interner interner_;
  StatementsOf<AllRecords>::type statements_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;   // the writer thread waits for work
  std::condition_variable space_;  // producers wait for room (kBlock)
  std::condition_variable done_;   // flush() waits for commits
  RecordQueue queue_;
  Batch batch_;  // being committed: filled under the lock, written by the writer thread alone
  bool commit_requested_ = false;  // the pending records reached the early-commit size
  bool idle_ = false;              // the writer thread found nothing to commit: the next record wakes it
  std::optional<RunInfo> pending_run_;
  std::uint64_t enqueued_ = 0;
  std::uint64_t committed_ = 0;
  std::uint64_t flush_target_ = 0;  // flush() waits until committed_ reaches this
  bool closing_ = false;
  bool closed_ = false;
  bool failed_ = false;
  bool stopped_ = false;
  std::uint64_t written_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t batches_ = 0;
  std::uint64_t lock_waits_ = 0;
  std::int64_t longest_lock_wait_ns_ = 0;
  std::string last_error_;
  std::thread thread_;
};

bool callingThreadIsInsideAWriter() noexcept { return t_producer_calls != 0; }

void raiseWhenLeavingTheWriter(int signal_number) noexcept { t_deferred_signal = signal_number; }

namespace {

// A store holds command lines, host names and source paths: only its owner may read it (as perf
// does with perf.data). SQLite gives the -wal and -shm files the mode of the store.
constexpr mode_t kStoreFileMode = 0600;

// Creates the empty file that SQLite then fills. O_EXCL | O_NOFOLLOW: a symlink planted at the
// temporary name (in a directory others can write) is never followed.
// Fails with the system's reason alone: the caller names the store.
Result<void> createPrivateFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return makeError(ErrorCode::kIo, std::strerror(errno));
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, kStoreFileMode);
  if (fd < 0) return makeError(ErrorCode::kIo, std::strerror(errno));
  ::close(fd);
  return {};
}

// The schema is written into a temporary file that is renamed into place only once complete, so
// a process killed while creating its store leaves either no store or a whole one at `path`. The
// rename replaces an existing store (or a symlink, which is not followed) in one step; anything
// else at `path` (a directory, a device, a FIFO) is refused, never removed.
Result<sqlite::Database> createStoreFile(const std::string& path) {
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode) && !S_ISLNK(existing.st_mode)) {
    return makeError(ErrorCode::kInvalidArgument, path + ": not a regular file (name a file for the store)");
  }
  const std::string building = path + ".creating-" + std::to_string(::getpid());
  if (auto created = createPrivateFile(building); !created) {
    return makeError(created.error().code, path + ": cannot write (" + created.error().message + ")");
  }
  {
    auto db = sqlite::Database::open(building, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW);
    if (!db) return db.error();
    const std::string schema = "PRAGMA application_id = " + std::to_string(kApplicationId) + "; BEGIN;" +
                               std::string(schemaSql()) + "INSERT INTO run (id, start_ns, start_wall_ns) VALUES (1, " +
                               std::to_string(base::monotonicNow()) + ", " + std::to_string(base::wallNow()) +
                               "); PRAGMA user_version = " + std::to_string(kSchemaVersion) +
                               "; COMMIT; PRAGMA journal_mode = WAL;";
    if (auto created = db->exec(schema); !created) {
      ::unlink(building.c_str());
      return makeError(created.error().code, path + ": cannot create the store (" + created.error().message + ")");
    }
  }
  if (auto renamed = renameStoreOver(building, path); !renamed) return renamed.error();
  auto db = sqlite::Database::open(path, SQLITE_OPEN_READWRITE);
  if (!db) return db.error();
  // WAL mode was set on the file before the rename: switching at `path` wrote a rollback journal, and a
  // process killed then left a hot journal that a read-only reader cannot roll back. temp_store = FILE:
  // building an index at close sorts the whole table; spilled to temporary files on disk, the sort holds
  // about one page cache of memory instead of a copy of the table.
  if (auto setup = db->exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA temp_store = FILE;");
      !setup) {
    return makeError(setup.error().code, path + ": cannot create the store (" + setup.error().message + ")");
  }
  return db;
}

Result<sqlite::Database> appendStoreFile(const std::string& path) {
  auto db = openStoreFile(path, /*writable=*/true);
  if (!db) return db.error();
  if (auto setup = db->exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"); !setup) {
    return makeError(setup.error().code, path + ": " + setup.error().message);
  }
  return db;
}

}  // namespace

Result<std::unique_ptr<Writer>> Writer::open(const std::string& path, WriterOptions options) {
  if (path.empty()) return makeError(ErrorCode::kInvalidArgument, "no store path given");
  options.memory_budget_bytes = std::max(options.memory_budget_bytes, kSmallestMemoryBudget);
  auto db = options.mode == OpenMode::kCreate ? createStoreFile(path) : appendStoreFile(path);
  if (!db) return db.error();
  if (auto cache = db->exec(cacheSizePragma(pageCacheBytes(options.memory_budget_bytes))); !cache) {
    return cache.error();
  }
  auto impl = std::make_unique<Impl>(path, options, std::move(*db));
  if (auto started = impl->start(); !started) return started.error();
  return std::unique_ptr<Writer>(new Writer(std::move(impl)));
}

Writer::Writer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Writer::~Writer() {
  if (impl_) (void)impl_->close(-1);
}

void Writer::setRun(const RunInfo& run) { impl_->setRun(run); }

namespace {
template <class T>
void enqueueAs(Writer::Impl& impl, void* record) {
  impl.enqueue(std::move(*static_cast<T*>(record)));
}
// One enqueue per queued record type, in RowRecords' order.
template <class... Ts>
constexpr auto enqueuers(std::tuple<Ts...>*) {
  return std::array{&enqueueAs<Ts>...};
}
constexpr auto kEnqueuers = enqueuers(static_cast<RowRecords*>(nullptr));
}  // namespace

void Writer::enqueue(std::size_t type, void* record) { kEnqueuers[type](*impl_, record); }

void Writer::flush() { impl_->flush(); }
Result<void> Writer::close(base::Nanos end_ns) { return impl_->close(end_ns); }

void Writer::abandon() {
  // After fork() only the calling thread exists; the writer thread and its locks are gone
  // and the SQLite connection belongs to the parent. Leaking is the only safe choice.
  (void)impl_.release();
}

WriterStats Writer::stats() const { return impl_->stats(); }
const std::string& Writer::path() const { return impl_->path(); }

}  // namespace torchscope::store
