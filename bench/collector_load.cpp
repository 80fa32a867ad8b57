// The collector under load: a job that hands it `rate` records per second for `seconds` through
// the C API (torchscope_record_step, what the Python bridge calls), paced against the clock. Prints
// what the job paid (the slowest calls in wall time and in the thread's own CPU time, the context
// switches inside calls: voluntary ones are waits, involuntary ones are the scheduler's), the
// process's resident memory over time (VmRSS sampled every 100 ms) and its peak (VmHWM), and how
// many records were stored and dropped (counted from the store after torchscope_finish).
//
// The collector starts when the library loads, so run it with the store path in the environment
// (TORCHSCOPE_VERBOSE=1 adds the queue's peak and the calls that waited for its lock; TORCHSCOPE_BUFFER_MB
// sets the budget):
//   TORCHSCOPE_OUTPUT=/tmp/load.db bench_collector_load [rate=1000000] [seconds=60] [threads=1]
#include <sys/resource.h>
#include <time.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "torchscope/collector/collector.h"
#include "torchscope/store/Reader.h"

#include "ProcessCpu.h"

// The collector records outside Python only when there is a GPU to trace: this symbol makes the
// bench look like the Python interpreter it stands in for (the bridge calls the same C API).
extern "C" __attribute__((visibility("default"))) int Py_BytesMain(int, char**) { return 0; }

namespace {

using Clock = std::chrono::steady_clock;

// What one call cost its thread: where a slow call's CPU went (user code, or the kernel: page
// faults, system calls).
struct SlowCall {
  std::int64_t index = 0;
  std::int64_t cpu_ns = 0;
  std::int64_t user_us = 0;
  std::int64_t system_us = 0;
  std::int64_t minor_faults = 0;
  std::int64_t switches = 0;  // voluntary and involuntary
};
constexpr std::size_t kSlowCallsKept = 8;

// Keeps the kSlowCallsKept calls with the most CPU, most first.
void keepIfSlow(std::vector<SlowCall>& kept, const SlowCall& call) {
  if (kept.size() == kSlowCallsKept && call.cpu_ns <= kept.back().cpu_ns) return;
  if (kept.size() == kSlowCallsKept) kept.pop_back();
  kept.insert(std::upper_bound(kept.begin(), kept.end(), call,
                               [](const SlowCall& a, const SlowCall& b) { return a.cpu_ns > b.cpu_ns; }),
              call);
}

std::int64_t microseconds(const timeval& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000 + t.tv_usec; }

struct ProducerResult {
  std::int64_t calls = 0;
  std::int64_t refused = 0;          // calls that returned -1 (record not taken)
  std::int64_t slowest_ns = 0;       // the longest single call, wall time
  std::int64_t slowest_cpu_ns = 0;   // the most CPU time one call took on its thread
  std::int64_t over_budget = 0;      // calls longer than the budget, wall time
  std::int64_t cpu_over_budget = 0;  // calls that used more CPU than the budget
  std::int64_t waits = 0;            // voluntary context switches inside calls (a lock, I/O)
  std::int64_t preemptions = 0;      // involuntary ones (the scheduler gave the core away)
  std::vector<SlowCall> slowest_cpu;  // the calls that used the most CPU, most first
  // The control: a call of fixed user work (no lock, allocation or system call) as long as an
  // average collector call, timed the same way after every burst. What it is charged above its
  // work is the machine's (this kernel charges interrupt time to the thread it interrupts).
  std::int64_t control_calls = 0;
  std::int64_t control_slowest_cpu_ns = 0;
  std::int64_t control_cpu_over_budget = 0;
  std::int64_t control_work_ns = 0;  // what one control call's work takes: the first burst's average call
};

std::int64_t threadCpuNs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

rusage threadUsage() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage;
}

// Where the control's result goes, so that its work is not optimised away.
volatile std::uint64_t g_control_sink = 0;

// Fixed user work: `iterations` steps of a linear congruential generator.
__attribute__((noinline)) std::uint64_t controlWork(std::int64_t iterations, std::uint64_t seed) {
  for (std::int64_t k = 0; k < iterations; ++k) seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  return seed;
}

// Nanoseconds of CPU per controlWork() iteration on this machine.
double controlNsPerIteration() {
  constexpr std::int64_t kIterations = 20'000'000;
  const std::int64_t before = threadCpuNs();
  g_control_sink = controlWork(kIterations, 1);
  return static_cast<double>(threadCpuNs() - before) / kIterations;
}

// Records in bursts of `burst` calls, each burst due at its slot of the schedule.
ProducerResult produce(double rate, double seconds, std::int64_t budget_ns, int thread_index) {
  ProducerResult result;
  constexpr std::int64_t kBurst = 1000;
  const auto start = Clock::now();
  const auto burst_period = std::chrono::duration<double>(static_cast<double>(kBurst) / rate);
  const auto total = static_cast<std::int64_t>(rate * seconds);
  const double ns_per_iteration = controlNsPerIteration();
  std::int64_t control_iterations = 1;
  std::int64_t first_burst_cpu_ns = 0;  // the collector's calls only
  for (std::int64_t done = 0; done < total; done += kBurst) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                              burst_period * static_cast<double>(done / kBurst)));
    // Only the calls run between the two readings: the switches counted are those inside calls.
    const rusage burst_start = threadUsage();
    for (std::int64_t i = done; i < std::min(done + kBurst, total); ++i) {
      const rusage usage_before = threadUsage();
      const auto before = Clock::now();
      const std::int64_t cpu_before = threadCpuNs();
      if (torchscope_record_step(i, i * 10, i * 10 + 5, thread_index == 0 ? "marker" : "optimizer") != 0) {
        ++result.refused;
      }
      const std::int64_t cpu = threadCpuNs() - cpu_before;
      if (done == 0) first_burst_cpu_ns += cpu;
      if (result.slowest_cpu.size() < kSlowCallsKept || cpu > result.slowest_cpu.back().cpu_ns) {
        const rusage usage_after = threadUsage();
        keepIfSlow(result.slowest_cpu,
                   SlowCall{i, cpu, microseconds(usage_after.ru_utime) - microseconds(usage_before.ru_utime),
                            microseconds(usage_after.ru_stime) - microseconds(usage_before.ru_stime),
                            usage_after.ru_minflt - usage_before.ru_minflt,
                            usage_after.ru_nvcsw + usage_after.ru_nivcsw - usage_before.ru_nvcsw - usage_before.ru_nivcsw});
      }
      const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - before).count();
      result.slowest_ns = std::max<std::int64_t>(result.slowest_ns, took);
      result.slowest_cpu_ns = std::max(result.slowest_cpu_ns, cpu);
      if (took > budget_ns) ++result.over_budget;
      if (cpu > budget_ns) ++result.cpu_over_budget;
      ++result.calls;
    }
    const rusage burst_end = threadUsage();
    result.waits += burst_end.ru_nvcsw - burst_start.ru_nvcsw;
    result.preemptions += burst_end.ru_nivcsw - burst_start.ru_nivcsw;
    if (done == 0) {
      result.control_work_ns = first_burst_cpu_ns / kBurst;
      control_iterations = std::max<std::int64_t>(
          1, static_cast<std::int64_t>(static_cast<double>(result.control_work_ns) / ns_per_iteration));
    }
    for (std::int64_t k = 0; k < kBurst / 10; ++k) {
      const std::int64_t cpu_before = threadCpuNs();
      g_control_sink = controlWork(control_iterations, static_cast<std::uint64_t>(k));
      const std::int64_t cpu = threadCpuNs() - cpu_before;
      result.control_slowest_cpu_ns = std::max(result.control_slowest_cpu_ns, cpu);
      if (cpu > budget_ns) ++result.control_cpu_over_budget;
      ++result.control_calls;
    }
  }
  return result;
}

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM").
std::int64_t statusKib(const char* field) {
  std::ifstream status("/proc/self/status");
  const std::string prefix = std::string(field) + ":";
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(prefix, 0) == 0) return std::atoll(line.c_str() + prefix.size());
  }
  return -1;
}

double mib(std::int64_t kib) { return static_cast<double>(kib) / 1024; }

// VmRSS every 100 ms on its own thread: the highest value while recording and while closing, and
// one value a second for the timeline.
class ResidentSampler {
 public:
  ResidentSampler() : thread_([this] { run(); }) {}
  ~ResidentSampler() { stop(); }
  void markClosing() { closing_ = true; }
  void stop() {
    stopped_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::int64_t recordingPeakKib() const { return recording_peak_; }
  std::int64_t closingPeakKib() const { return closing_peak_; }
  const std::vector<std::int64_t>& timelineKib() const { return timeline_; }

 private:
  void run() {
    for (int tick = 0; !stopped_; ++tick) {
      const std::int64_t rss = statusKib("VmRSS");
      auto& peak = closing_ ? closing_peak_ : recording_peak_;
      peak = std::max(peak.load(), rss);
      if (tick % 10 == 0) timeline_.push_back(rss);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  std::atomic<bool> stopped_{false};
  std::atomic<bool> closing_{false};
  std::atomic<std::int64_t> recording_peak_{0};
  std::atomic<std::int64_t> closing_peak_{0};
  std::vector<std::int64_t> timeline_;
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  const double rate = argc > 1 ? std::atof(argv[1]) : 1e6;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 60;
  const int threads = argc > 3 ? std::max(1, std::atoi(argv[3])) : 1;
  constexpr std::int64_t kBudgetNs = 1'000'000;  // 1 ms: what one record may cost the job at worst
  if (torchscope_is_active() == 0) {
    fmt::print(stderr, "the collector is not active: set TORCHSCOPE_OUTPUT (and LD_PRELOAD it if not linked)\n");
    return 2;
  }
  const std::string path = torchscope_store_path();
  const std::int64_t baseline_kib = statusKib("VmRSS");  // the collector is open, nothing recorded yet
  ResidentSampler sampler;
  const auto started = Clock::now();
  std::vector<ProducerResult> results(static_cast<std::size_t>(threads));
  std::vector<std::thread> producers;
  for (int t = 0; t < threads; ++t) {
    producers.emplace_back([&, t] { results[static_cast<std::size_t>(t)] = produce(rate / threads, seconds, kBudgetNs, t); });
  }
  for (auto& producer : producers) producer.join();
  const double produced_s = std::chrono::duration<double>(Clock::now() - started).count();
  const std::int64_t running_peak_kib = statusKib("VmHWM");  // before the store's indexes are built
  sampler.markClosing();
  torchscope_finish(0);
  sampler.stop();
  const double cpu_s = torchscope::bench::processCpuSeconds();
  const std::int64_t peak_kib = statusKib("VmHWM");

  ProducerResult total;
  for (const auto& r : results) {
    total.calls += r.calls;
    total.refused += r.refused;
    total.over_budget += r.over_budget;
    total.cpu_over_budget += r.cpu_over_budget;
    total.waits += r.waits;
    total.preemptions += r.preemptions;
    total.slowest_ns = std::max(total.slowest_ns, r.slowest_ns);
    total.slowest_cpu_ns = std::max(total.slowest_cpu_ns, r.slowest_cpu_ns);
    for (const SlowCall& call : r.slowest_cpu) keepIfSlow(total.slowest_cpu, call);
    total.control_calls += r.control_calls;
    total.control_cpu_over_budget += r.control_cpu_over_budget;
    total.control_slowest_cpu_ns = std::max(total.control_slowest_cpu_ns, r.control_slowest_cpu_ns);
    total.control_work_ns = std::max(total.control_work_ns, r.control_work_ns);
  }
  std::int64_t stored = -1;
  if (auto reader = torchscope::store::Reader::open(path); reader) {
    auto counts = (*reader)->counts();
    if (counts) stored = counts->at("steps");
  }
  fmt::print("asked: {:.0f} records/s for {:.0f} s on {} thread(s); produced {} records in {:.1f} s wall ({:.2f} M/s)\n",
             rate, seconds, threads, total.calls, produced_s, static_cast<double>(total.calls) / produced_s / 1e6);
  fmt::print("stored: {}  dropped: {} ({:.1f} %)  refused calls: {}\n", stored, total.calls - stored,
             100.0 * static_cast<double>(total.calls - stored) / static_cast<double>(total.calls), total.refused);
  fmt::print("slowest call: {:.3f} ms wall, {:.3f} ms of its thread's CPU; calls over the {:.0f} ms budget: {} wall, {} CPU\n",
             static_cast<double>(total.slowest_ns) / 1e6, static_cast<double>(total.slowest_cpu_ns) / 1e6,
             static_cast<double>(kBudgetNs) / 1e6, total.over_budget, total.cpu_over_budget);
  fmt::print("calls with the most CPU (call index: CPU, user + system as the kernel counts them, minor page faults, "
             "context switches):");
  for (const SlowCall& call : total.slowest_cpu) {
    fmt::print(" #{}: {:.3f} ms, {} + {} us, {} faults, {} switches;", call.index, static_cast<double>(call.cpu_ns) / 1e6,
               call.user_us, call.system_us, call.minor_faults, call.switches);
  }
  fmt::print("\n");
  fmt::print("control, {} calls of {:.2f} us of fixed user work timed the same way: slowest {:.3f} ms of thread CPU, "
             "{} over the {:.0f} ms budget (what the machine charges a thread besides its own work)\n",
             total.control_calls, static_cast<double>(total.control_work_ns) / 1e3,
             static_cast<double>(total.control_slowest_cpu_ns) / 1e6, total.control_cpu_over_budget,
             static_cast<double>(kBudgetNs) / 1e6);
  fmt::print("context switches inside calls: {} waits (voluntary), {} preemptions (involuntary)\n", total.waits,
             total.preemptions);
  fmt::print("process CPU: {:.1f} s; resident memory: {:.1f} MiB before recording, peak {:.1f} MiB while recording "
             "(sampled {:.1f}), {:.1f} MiB after closing (sampled while closing {:.1f})\n",
             cpu_s, mib(baseline_kib), mib(running_peak_kib), mib(sampler.recordingPeakKib()), mib(peak_kib),
             mib(sampler.closingPeakKib()));
  std::string timeline;
  for (const std::int64_t kib : sampler.timelineKib()) timeline += fmt::format(" {:.0f}", mib(kib));
  fmt::print("VmRSS each second, MiB:{}\n", timeline);
  return 0;
}
