#include "HostMemory.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ProcessIds.h"
#include "torchscope/base/Clock.h"

namespace torchscope::collector {
namespace {

constexpr std::chrono::milliseconds kBetweenStepsRow{500};

// /proc/self/statm stays open: each read is one pread instead of open/read/close. The descriptor
// names the process that opened it, so a fork() child opens its own.
int statmDescriptor() {
  static std::atomic<std::int64_t> owner{-1};
  static std::atomic<int> fd{-1};
  const std::int64_t pid = processId();
  if (owner.load() != pid) {
    // The parent's descriptor is left open in the child: closing it could race a reader.
    fd.store(::open("/proc/self/statm", O_RDONLY | O_CLOEXEC));
    owner.store(pid);
  }
  return fd.load();
}

// The second of the space-separated decimal numbers that `text` starts with, -1 when there is none. Read by hand:
// strtoll's general parsing was a fifth of the instructions of a step's record.
std::int64_t secondNumber(const char* text) {
  const char* at = text;
  while (*at >= '0' && *at <= '9') ++at;
  if (at == text || *at != ' ') return -1;
  ++at;
  const char* digits = at;
  std::int64_t value = 0;
  for (; *at >= '0' && *at <= '9' && at - digits < 18; ++at) value = value * 10 + (*at - '0');
  return at == digits ? -1 : value;
}

}  // namespace

std::int64_t currentRssBytes() {
  const int fd = statmDescriptor();
  if (fd < 0) return -1;
  char buffer[128];
  const ssize_t read = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  if (read <= 0) return -1;
  buffer[read] = '\0';
  // "size resident shared text lib data dt", in pages.
  const std::int64_t resident_pages = secondNumber(buffer);
  if (resident_pages < 0) return -1;
  static const long page_size = ::sysconf(_SC_PAGESIZE);
  return resident_pages * page_size;
}

std::int64_t peakRssBytes() {
  std::FILE* status = std::fopen("/proc/self/status", "re");
  if (status == nullptr) return -1;
  char line[256];
  std::int64_t peak = -1;
  while (std::fgets(line, sizeof(line), status) != nullptr) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) {
      peak = std::strtoll(line + 6, nullptr, 10) * 1024;  // kB
      break;
    }
  }
  std::fclose(status);
  return peak;
}

HostMemorySampler::HostMemorySampler(store::Writer& writer, pid_t pid, std::chrono::milliseconds period,
                                     const CaptureWindow& window)
    : writer_(writer), pid_(pid), period_(period), window_(window) {
  // The thread takes no signals: the job's handlers keep running on the job's own threads.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  thread_ = std::thread([this] { run(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

HostMemorySampler::~HostMemorySampler() { stop(); }

namespace {
void raiseTo(std::atomic<std::int64_t>& peak, std::int64_t value) {
  std::int64_t current = peak.load(std::memory_order_relaxed);
  while (value > current && !peak.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
}
}  // namespace

void HostMemorySampler::notePeak(std::int64_t rss) {
  raiseTo(peak_since_step_, rss);
  raiseTo(peak_of_run_, rss);
}

void HostMemorySampler::run() {
  pthread_setname_np(pthread_self(), "torchscope-mem");
  std::unique_lock lock(mutex_);
  while (!thread_ends_.load()) {
    if (!window_.isOpen()) {
      // Not under mutex_: endThread() takes it.
      lock.unlock();
      window_.waitWhileClosed(thread_ends_);
      lock.lock();
    }
    wake_.wait_for(lock, period_, [this] { return thread_ends_.load(); });
    if (thread_ends_.load()) break;
    sampleOnce();
  }
}

void HostMemorySampler::sampleOnce() {
  if (!window_.isOpen()) return;
  const auto now = std::chrono::steady_clock::now();
  const bool row_due = now - last_row_ >= kBetweenStepsRow;
  // One read a period in all: a step end that read the RSS within the period stands for this read (its rows hold the
  // RSS and the peak), unless a row between steps is due. A job of short steps reads it at its step ends only.
  const std::int64_t now_ns = base::monotonicNow();
  const std::int64_t last_step_read = last_step_read_ns_.load(std::memory_order_relaxed);
  if (!row_due && last_step_read >= 0 &&
      now_ns - last_step_read < std::chrono::duration_cast<std::chrono::nanoseconds>(period_).count()) {
    return;
  }
  const std::int64_t rss = currentRssBytes();
  if (rss < 0) return;
  notePeak(rss);
  if (row_due) {
    last_row_ = now;
    writer_.add(store::MemorySample{pid_, -1, "host.rss", now_ns, -1, rss});
  }
}

void HostMemorySampler::endThread() {
  {
    std::lock_guard lock(mutex_);
    thread_ends_ = true;
  }
  wake_.notify_all();
  window_.wakeWaiters();
  std::lock_guard joining(join_mutex_);
  if (thread_.joinable()) thread_.join();
}

void HostMemorySampler::handTicksOver() {
  if (stopped_.load() || handed_over_.load()) return;
  endThread();
  last_sample_ = std::chrono::steady_clock::now();
  handed_over_.store(true, std::memory_order_release);
}

void HostMemorySampler::sampleIfDue() {
  if (!handed_over_.load(std::memory_order_acquire) || stopped_.load()) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_sample_ < period_) return;
  last_sample_ = now;
  sampleOnce();
}

void HostMemorySampler::recordStepEnd(std::int64_t step, std::int64_t ts_ns) {
  if (stopped_.load()) return;
  // Right after a step the kernel's /proc path is out of the caches: a read cost 7-12 us of the job's thread there
  // (docs/performance.md, *Collector*), 0.5 % of a 2 ms step. So at most one step end a period reads it; the steps
  // between have no rows, and the next row's peak covers them.
  const std::int64_t last = last_step_read_ns_.load(std::memory_order_relaxed);
  const std::int64_t period_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(period_).count();
  if (last >= 0 && ts_ns >= last && ts_ns - last < period_ns) return;
  last_step_read_ns_.store(ts_ns, std::memory_order_relaxed);
  const std::int64_t rss = currentRssBytes();
  if (rss < 0) return;
  // The peak since the previous step end, this end included; the next step's peak starts from here.
  const std::int64_t sampled_peak = peak_since_step_.exchange(rss, std::memory_order_relaxed);
  raiseTo(peak_of_run_, rss);
  writer_.add(store::MemorySample{pid_, -1, "host.rss", ts_ns, step, rss});
  writer_.add(store::MemorySample{pid_, -1, "host.rss_peak", ts_ns, step, std::max(rss, sampled_peak)});
}

void HostMemorySampler::stop() {
  if (stopped_.exchange(true)) return;
  endThread();
  const std::int64_t peak = std::max(peakRssBytes(), peak_of_run_.load());
  if (peak >= 0) writer_.add(store::MemorySample{pid_, -1, "host.hwm", base::monotonicNow(), -1, peak});
}

}  // namespace torchscope::collector
