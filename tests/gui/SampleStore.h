// A small but complete store for the GUI tests, written with the real Writer: one process with two
// threads (steps, NVTX, CPU ops, CUDA API, a sync with its source line), a GPU with two streams
// (kernels, a memcpy, a memset), torch.compile events, two findings, and memory: host RSS at each
// step end growing 1 MiB per step plus one sample inside each step, the GPU's allocated and reserved
// bytes at each step end.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "torchscope/store/Writer.h"

// Designated initializers name only the columns a test cares about; the rest keep their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace torchscope::gui::testing {

inline constexpr base::Nanos kBase = 1'000'000'000;
inline constexpr base::Nanos kStepNs = 10'000'000;
inline constexpr std::int64_t kMiB = std::int64_t{1} << 20;
inline constexpr std::int64_t kRssBase = 512 * kMiB;     // host RSS at the end of step 0
inline constexpr std::int64_t kInStepRss = kMiB / 2;     // above the previous step end's, 5 ms into a step
inline constexpr std::int64_t kAllocatedBase = 1024 * kMiB;
inline constexpr std::int64_t kReserved = 2048 * kMiB;

// A file name of this test process's own: ctest runs each test case as its own process, several at once.
inline std::filesystem::path processFile(const std::filesystem::path& dir, const std::string& stem,
                                         const std::string& extension) {
  return dir / (stem + "-" + std::to_string(::getpid()) + extension);
}

// Writes `steps` steps of `kernels_per_step` kernels each into a new store in `dir`; returns the path.
inline std::string writeSampleStore(const std::filesystem::path& dir, int steps = 20, int kernels_per_step = 100) {
  std::filesystem::create_directories(dir);
  const std::string path = processFile(dir, "run", ".db").string();
  std::filesystem::remove(path);
  auto writer = store::Writer::open(path);
  EXPECT_TRUE(writer.ok());
  if (!writer) return path;
  auto& w = **writer;
  store::RunInfo run;
  run.command_line = "python train.py";
  run.start_ns = kBase;
  run.source = "collector";
  w.setRun(run);
  w.add(store::Process{.pid = 42, .name = "python", .start_ns = kBase});
  w.add(store::Thread{.pid = 42, .tid = 42, .name = "MainThread"});
  w.add(store::Thread{.pid = 42, .tid = 43, .name = "loader"});
  w.add(store::Device{.device = 0, .name = "Mock GPU"});
  for (int s = 0; s < steps; ++s) {
    const base::Nanos step_start = kBase + s * kStepNs;
    w.add(store::Step{.pid = 42, .tid = 42, .index = s, .start_ns = step_start, .end_ns = step_start + kStepNs - 1000,
                      .source = "optimizer"});
    w.add(store::NvtxEvent{.pid = 42, .tid = 42, .start_ns = step_start + 100, .end_ns = step_start + 5'000'000,
                           .name = "forward", .domain = "", .kind = "range"});
    w.add(store::CpuOp{.pid = 42, .tid = 42, .start_ns = step_start + 200, .end_ns = step_start + 4'000'000,
                       .name = "aten::linear", .category = "cpu_op"});
    w.add(store::CpuOp{.pid = 42, .tid = 42, .start_ns = step_start + 300, .end_ns = step_start + 1'000'000,
                       .name = "aten::addmm", .category = "cpu_op"});
    w.add(store::CpuOp{.pid = 42, .tid = 43, .start_ns = step_start, .end_ns = step_start + 2'000'000,
                       .name = "DataLoader.__next__", .category = "python_function"});
    for (int k = 0; k < kernels_per_step; ++k) {
      const base::Nanos start = step_start + 500'000 + k * 60'000;
      w.add(store::ApiCall{.pid = 42, .tid = 42, .start_ns = start - 20'000, .end_ns = start - 15'000,
                           .name = "cudaLaunchKernel", .api = "runtime", .correlation_id = s * 1000 + k});
      w.add(store::Kernel{.pid = 42, .device = 0, .stream = 7, .start_ns = start, .end_ns = start + 40'000,
                          .name = k % 2 == 0 ? "ampere_sgemm_128x64" : "vectorized_elementwise_kernel",
                          .correlation_id = s * 1000 + k});
    }
    w.add(store::Memcpy{.pid = 42, .device = 0, .stream = 13, .start_ns = step_start + 100'000,
                        .end_ns = step_start + 400'000, .copy_kind = "HtoD", .bytes = 4 << 20, .pageable = true});
    w.add(store::Memset{.pid = 42, .device = 0, .stream = 13, .start_ns = step_start + 450'000,
                        .end_ns = step_start + 460'000, .bytes = 1024});
    w.add(store::Sync{.pid = 42, .tid = 42, .start_ns = step_start + 8'000'000, .end_ns = step_start + 9'000'000,
                      .sync_kind = "stream", .origin = "python", .op = "aten::item", .stream = 7,
                      .file = "/src/train.py", .line = 57, .function = "train_step"});
    const base::Nanos step_end = step_start + kStepNs - 1000;
    w.add(store::MemorySample{.pid = 42, .device = -1, .series = "host.rss", .ts_ns = step_start + 5'000'000,
                              .step = -1, .value = kRssBase + (s - 1) * kMiB + kInStepRss});
    w.add(store::MemorySample{.pid = 42, .device = -1, .series = "host.rss", .ts_ns = step_end, .step = s,
                              .value = kRssBase + s * kMiB});
    w.add(store::MemorySample{.pid = 42, .device = -1, .series = "host.rss_peak", .ts_ns = step_end, .step = s,
                              .value = kRssBase + s * kMiB + kInStepRss});
    w.add(store::MemorySample{.pid = 42, .device = 0, .series = "cuda.allocated", .ts_ns = step_end, .step = s,
                              .value = kAllocatedBase + (s % 4) * 64 * kMiB});
    w.add(store::MemorySample{.pid = 42, .device = 0, .series = "cuda.reserved", .ts_ns = step_end, .step = s,
                              .value = kReserved});
  }
  w.add(store::Compile{.pid = 42, .frame_id = 0, .frame_compile_id = 0, .co_name = "forward",
                       .co_filename = "/src/model.py", .co_firstlineno = 12, .start_ns = kBase - 500'000'000,
                       .end_ns = kBase - 100'000'000, .status = "ok"});
  w.add(store::GraphBreak{.pid = 42, .frame_id = 0, .ts_ns = kBase - 300'000'000,
                          .break_type = "Data-dependent branching", .file = "/src/model.py", .line = 31});
  w.add(store::Recompile{.pid = 42, .frame_id = 0, .frame_compile_id = 1, .ts_ns = kBase + 5 * kStepNs,
                         .co_name = "forward", .co_filename = "/src/model.py", .co_firstlineno = 12,
                         .cause = "dynamic-shape"});
  w.add(store::Finding{.rule = "sync/item", .severity = "warning", .title = "Host-device sync in the step",
                       .file = "train.py", .line = 57, .impact_seconds = 0.02, .impact_fraction = 0.1});
  w.add(store::Finding{.rule = "compile/graph-break", .severity = "error", .title = "Graph break",
                       .file = "/src/model.py", .line = 31, .impact_seconds = 0.5, .impact_fraction = 0.3});
  EXPECT_TRUE(w.close(kBase + steps * kStepNs).ok());
  return path;
}

}  // namespace torchscope::gui::testing
