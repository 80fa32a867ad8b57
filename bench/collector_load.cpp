// The collector under load: a job that hands it `rate` records per second for `seconds` through
// the C API (torchscope_record_step, what the Python bridge calls), paced against the clock. Prints
// what the job paid (the slowest calls, CPU time), the collector's peak memory, and how many records
// were stored and dropped (counted from the store after torchscope_finish).
//
// The collector starts when the library loads, so run it with the store path in the environment:
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

struct ProducerResult {
  std::int64_t calls = 0;
  std::int64_t refused = 0;        // calls that returned -1 (record not taken)
  std::int64_t slowest_ns = 0;     // the longest single call
  std::int64_t over_budget = 0;    // calls longer than the budget
};

// Records in bursts of `burst` calls, each burst due at its slot of the schedule.
ProducerResult produce(double rate, double seconds, std::int64_t budget_ns, int thread_index) {
  ProducerResult result;
  constexpr std::int64_t kBurst = 1000;
  const auto start = Clock::now();
  const auto burst_period = std::chrono::duration<double>(static_cast<double>(kBurst) / rate);
  const auto total = static_cast<std::int64_t>(rate * seconds);
  for (std::int64_t done = 0; done < total; done += kBurst) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                              burst_period * static_cast<double>(done / kBurst)));
    for (std::int64_t i = done; i < std::min(done + kBurst, total); ++i) {
      const auto before = Clock::now();
      if (torchscope_record_step(i, i * 10, i * 10 + 5, thread_index == 0 ? "marker" : "optimizer") != 0) {
        ++result.refused;
      }
      const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - before).count();
      result.slowest_ns = std::max<std::int64_t>(result.slowest_ns, took);
      if (took > budget_ns) ++result.over_budget;
      ++result.calls;
    }
  }
  return result;
}

std::int64_t peakResidentKib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

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
  const auto started = Clock::now();
  std::vector<ProducerResult> results(static_cast<std::size_t>(threads));
  std::vector<std::thread> producers;
  for (int t = 0; t < threads; ++t) {
    producers.emplace_back([&, t] { results[static_cast<std::size_t>(t)] = produce(rate / threads, seconds, kBudgetNs, t); });
  }
  for (auto& producer : producers) producer.join();
  const double produced_s = std::chrono::duration<double>(Clock::now() - started).count();
  const std::int64_t running_peak_kib = peakResidentKib();  // before the store's indexes are built
  torchscope_finish(0);
  const double cpu_s = torchscope::bench::processCpuSeconds();
  const std::int64_t peak_kib = peakResidentKib();

  ProducerResult total;
  for (const auto& r : results) {
    total.calls += r.calls;
    total.refused += r.refused;
    total.over_budget += r.over_budget;
    total.slowest_ns = std::max(total.slowest_ns, r.slowest_ns);
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
  fmt::print("slowest call: {:.3f} ms; calls over the {:.0f} ms budget: {}\n", static_cast<double>(total.slowest_ns) / 1e6,
             static_cast<double>(kBudgetNs) / 1e6, total.over_budget);
  fmt::print("process CPU: {:.1f} s; peak resident memory: {:.1f} MiB while recording, {:.1f} MiB after closing\n",
             cpu_s, static_cast<double>(running_peak_kib) / 1024, static_cast<double>(peak_kib) / 1024);
  return 0;
}
