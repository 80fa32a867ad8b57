#include "SyntheticStore.h"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <utility>

#include "torchscope/store/Writer.h"

namespace {

namespace st = torchscope::store;
constexpr torchscope::base::Nanos kStart = 1'000'000'000;
constexpr torchscope::base::Nanos kWallStart = 1'760'000'000'000'000'000;

}  // namespace

std::int64_t buildSyntheticStore(const std::string& path, const SyntheticStoreOptions& options) {
  const std::int64_t events = options.events;
  const std::int64_t swap_every = options.swap_every;
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
  run.host = options.rank >= 0 ? fmt::format("node{}", options.rank / 8) : "";
  run.start_wall_ns = kWallStart;
  w.setRun(run);
  if (options.rank >= 0) {
    st::Process process;
    process.pid = 1;
    process.name = "python";
    process.rank = options.rank;
    process.local_rank = options.rank % 8;
    process.world_size = options.world_size;
    process.start_ns = kStart;
    w.add(process);
  }
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
  torchscope::base::Nanos t = kStart;
  std::int64_t correlation = 0;
  std::int64_t step = 0;
  constexpr std::int64_t kGroupsPerStep = 10;
  torchscope::base::Nanos step_start = t;
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
      // A rank's NCCL all-reduce per group, on its own stream, overlapping the compute kernels that follow.
      if (options.rank >= 0 && k == 39) {
        kernel.stream = 13;
        kernel.end_ns = t + 5'000 + options.collective_ns;
        kernel.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
      }
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
    t += 30'000 + options.extra_ns_per_group;
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
  for (std::int64_t r = 0; r < options.extra_recompiles; ++r) {
    st::Recompile recompile;
    recompile.pid = 1;
    recompile.frame_id = 0;
    recompile.frame_compile_id = r + 1;
    recompile.ts_ns = kStart + 2'000'000 + r;
    recompile.co_name = "forward";
    recompile.co_filename = "model.py";
    recompile.co_firstlineno = 10;
    recompile.guard_failures = R"(["tensor 'x' size mismatch at index 0. expected 32, actual 24"])";
    recompile.cause = "dynamic-shape";
    recompile.cause_detail = "x";
    recompile.stack = R"([{"file": "train.py", "line": 41, "function": "train"}])";
    w.add(recompile);
    st::Compile again;  // the recompilation itself: 50 ms
    again.pid = 1;
    again.frame_id = 0;
    again.frame_compile_id = r + 1;
    again.co_name = "forward";
    again.co_filename = "model.py";
    again.co_firstlineno = 10;
    again.start_ns = recompile.ts_ns;
    again.end_ns = recompile.ts_ns + 50'000'000;
    again.status = "ok";
    again.restart_reasons = "[]";
    w.add(again);
  }
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

