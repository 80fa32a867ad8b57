// Analysis time of a 10 M-event store: builds the store once (kernels and their launch calls, CPU ops, copies,
// syncs, steps, compiles), then times analyze() a few times. Usage: bench_analyzer [STORE] [EVENTS] [SWAP_EVERY]
// SWAP_EVERY > 0 stores every SWAP_EVERY-th kernel after the one that follows it, as CUPTI buffers hold kernels of
// concurrent streams (0, the default: in start order). An existing STORE is reused. Results go to docs/performance.md.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/store/Writer.h"

namespace {

namespace st = torchscope::store;
constexpr st::Nanos kStart = 1'000'000'000;

std::int64_t buildStore(const std::string& path, std::int64_t events, std::int64_t swap_every) {
  auto writer = st::Writer::open(path);
  if (!writer) {
    fmt::print(stderr, "cannot create {}: {}\n", path, writer.error().message);
    std::exit(1);
  }
  st::Writer& w = **writer;
  st::RunInfo run;
  run.command_line = "python bench.py";
  run.start_ns = kStart;
  run.source = "bench";
  w.setRun(run);
  st::Device device;
  device.name = "NVIDIA A100";
  device.compute_major = 8;
  device.properties = "{}";
  w.add(device);
  // Per 100 events: 40 kernels, 40 launch calls, 15 CPU ops, 3 copies, 2 syncs.
  const std::int64_t groups = events / 100;
  const char* kernel_names[] = {"ampere_sgemm_128x64_nn", "void at::native::vectorized_elementwise_kernel<4>",
                                "void at::native::reduce_kernel<512, 1>", "triton_poi_fused_add_mul_0",
                                "void cudnn::nchwToNhwcKernel", "ampere_bf16_s16816gemm_bf16_128x128"};
  const char* op_names[] = {"aten::add", "aten::mul", "aten::linear", "aten::addmm", "aten::relu",
                            "aten::matmul", "aten::softmax", "aten::matmul", "aten::convolution", "aten::item",
                            "aten::to", "aten::copy_", "aten::empty", "aten::view", "aten::sum"};
  st::Nanos t = kStart;
  std::int64_t correlation = 0;
  std::int64_t step = 0;
  constexpr std::int64_t kGroupsPerStep = 10;
  st::Nanos step_start = t;
  std::optional<st::Kernel> held;  // a kernel stored after its successor
  for (std::int64_t g = 0; g < groups; ++g) {
    for (int k = 0; k < 40; ++k) {
      ++correlation;
      st::ApiCall launch;
      launch.pid = 1;
      launch.tid = 1;
      launch.start_ns = t;
      launch.end_ns = t + 4'000;
      launch.name = "cudaLaunchKernel";
      launch.api = "runtime";
      launch.correlation_id = correlation;
      w.add(std::move(launch));
      st::Kernel kernel;
      kernel.pid = 1;
      kernel.stream = 7;
      kernel.start_ns = t + 5'000;
      kernel.end_ns = t + 8'000 + (k % 7) * 1'000;
      kernel.name = kernel_names[k % 6];
      kernel.correlation_id = correlation;
      if (swap_every > 0 && correlation % swap_every == 0) {
        held = std::move(kernel);
      } else {
        w.add(std::move(kernel));
        if (held) w.add(*std::exchange(held, std::nullopt));
      }
      t += 10'000;
    }
    for (int c = 0; c < 15; ++c) {
      st::CpuOp op;
      op.pid = 1;
      op.tid = 1;
      op.start_ns = t - 400'000 + c * 20'000;
      op.end_ns = op.start_ns + 15'000;
      op.name = op_names[c];
      op.category = "cpu_op";
      op.args = "{}";
      w.add(std::move(op));
    }
    for (int m = 0; m < 3; ++m) {
      st::Memcpy copy;
      copy.pid = 1;
      copy.stream = 7;
      copy.start_ns = t + m * 1'000;
      copy.end_ns = copy.start_ns + 800;
      copy.copy_kind = "HtoD";
      copy.bytes = 65536;
      copy.src_kind = m == 0 ? "pageable" : "pinned";
      copy.dst_kind = "device";
      copy.pageable = m == 0;
      copy.async = true;
      w.add(std::move(copy));
    }
    for (int s = 0; s < 2; ++s) {
      st::Sync sync;
      sync.pid = 1;
      sync.tid = 1;
      sync.start_ns = t + 5'000 + s * 10'000;
      sync.end_ns = sync.start_ns + 5'000;
      sync.sync_kind = "stream";
      sync.origin = "python";
      sync.op = s == 0 ? "aten::item" : "cudaStreamSynchronize";
      sync.file = "train.py";
      sync.line = 40 + s;
      sync.function = "train_step";
      sync.stack = "[]";
      w.add(std::move(sync));
    }
    t += 30'000;
    if ((g + 1) % kGroupsPerStep == 0) {
      st::Step marker;
      marker.pid = 1;
      marker.tid = 1;
      marker.index = step++;
      marker.start_ns = step_start;
      marker.end_ns = t;
      marker.source = "optimizer";
      w.add(marker);
      step_start = t;
    }
  }
  if (held) w.add(*held);
  st::Compile compile;
  compile.pid = 1;
  compile.frame_id = 0;
  compile.frame_compile_id = 0;
  compile.co_name = "forward";
  compile.co_filename = "model.py";
  compile.co_firstlineno = 10;
  compile.start_ns = kStart;
  compile.end_ns = kStart + 1'000'000;
  compile.status = "ok";
  compile.restart_reasons = "[]";
  w.add(compile);
  auto closed = w.close(t);
  if (!closed) {
    fmt::print(stderr, "cannot close {}: {}\n", path, closed.error().message);
    std::exit(1);
  }
  return groups * 100;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "analyzer_bench.db";
  const std::int64_t events = argc > 2 ? std::stoll(argv[2]) : 10'000'000;
  const std::int64_t swap_every = argc > 3 ? std::stoll(argv[3]) : 0;
  if (!std::filesystem::exists(path)) {
    const auto begin = std::chrono::steady_clock::now();
    const std::int64_t written = buildStore(path, events, swap_every);
    fmt::print("built {} with {} events in {:.1f} s\n", path, written,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  }
  std::vector<double> seconds;
  std::vector<double> cpu_seconds;  // on a shared machine the CPU time says more than the wall time
  std::size_t findings = 0;
  for (int run = 0; run < 3; ++run) {
    const auto begin = std::chrono::steady_clock::now();
    const std::clock_t cpu_begin = std::clock();
    auto analysis = torchscope::analyzer::analyze({path});
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    cpu_seconds.push_back(static_cast<double>(std::clock() - cpu_begin) / CLOCKS_PER_SEC);
    if (!analysis) {
      fmt::print(stderr, "analysis failed: {}\n", analysis.error().message);
      return 1;
    }
    findings = analysis->findings.size();
    if (run == 0) {
      for (const auto& finding : analysis->findings) fmt::print("  {} ({:.3f} s)\n", finding.rule, finding.impact_seconds);
    }
  }
  std::sort(seconds.begin(), seconds.end());
  std::sort(cpu_seconds.begin(), cpu_seconds.end());
  fmt::print("analyze: {} findings; wall min {:.3f} s, median {:.3f} s, max {:.3f} s; CPU median {:.3f} s over {} runs\n",
             findings, seconds.front(), seconds[seconds.size() / 2], seconds.back(), cpu_seconds[cpu_seconds.size() / 2],
             seconds.size());
  return 0;
}
