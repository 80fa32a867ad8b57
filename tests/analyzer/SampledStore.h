// A store with sampled stacks, written through store::Writer, for the flame graph's tests (analyzer and GUI).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "torchscope/store/Writer.h"

namespace torchscope::analyzer::testing {

inline constexpr base::Nanos kSampledStart = 1'000'000'000;
inline constexpr base::Nanos kSampledStep = 100'000'000;
inline constexpr base::Nanos kSampledMs = 1'000'000;
inline constexpr const char* kSampledTorch = "/usr/lib/python3.12/site-packages/torch/";

// The run of a job under `project` and its five 100 ms steps on thread 1 (the first one warm-up).
inline void writeSampledRunAndSteps(store::Writer& writer, const std::string& project) {
  store::RunInfo run;
  run.command_line = "python train.py";
  run.start_ns = kSampledStart;
  run.source = "collector";
  writer.setRun(run);
  writer.add(store::RunAttribute{"code.user_roots", "[\"" + project + "\"]"});
  writer.add(store::RunAttribute{"code.library_roots", "[\"/usr/lib/python3.12\"]"});
  for (std::int64_t index = 0; index < 5; ++index) {
    writer.add(store::Step{1, 1, index, kSampledStart + index * kSampledStep,
                           kSampledStart + (index + 1) * kSampledStep, "optimizer"});
  }
}

// The store at `path` of a job under `project`: five 100 ms steps (the first one warm-up), two threads. The main thread
// trains: a forward through torch's Module.__call__ into linear, a <lambda> loss and Adam; a loader thread reads
// batches. Per steady step the main thread spends 100 ms in its stacks; one step adds 1 ms in Adam's inner loop (under
// 0.5 %: pruned) and the loader 3 ms in load_batch, which the main thread also calls once for 1 ms (their nodes merge).
inline std::string writeSampledStore(const std::string& path, const std::string& project = "/work/proj") {
  auto opened = store::Writer::open(path);
  EXPECT_TRUE(opened.ok());
  store::Writer& writer = **opened;
  writeSampledRunAndSteps(writer, project);
  const std::vector<store::StackFrame> frames = {
      {1, project + "/train.py", 40, "<module>"},
      {2, project + "/train.py", 30, "train_step"},
      {3, std::string(kSampledTorch) + "nn/modules/module.py", 1750, "_call_impl"},
      {4, project + "/model.py", 12, "forward"},
      {5, std::string(kSampledTorch) + "nn/functional.py", 2100, "linear"},
      {6, project + "/train.py", 33, "<lambda>"},
      {7, std::string(kSampledTorch) + "optim/adam.py", 200, "step"},
      {8, project + "/data.py", 5, "load_batch"},
      {9, std::string(kSampledTorch) + "optim/adam.py", 210, "_single_tensor_adam"},
  };
  for (const auto& frame : frames) writer.add(frame);
  // The main thread's trie, then the loader's own nodes for the same frames.
  const std::vector<store::Stack> stacks = {{1, -1, 1}, {2, 1, 2}, {3, 2, 3}, {4, 3, 4},   {5, 4, 5},  {6, 2, 6},
                                            {7, 2, 7},  {8, 1, 8}, {9, 7, 9}, {10, -1, 1}, {11, 10, 8}};
  for (const auto& stack : stacks) writer.add(stack);
  const auto sample = [&](std::int64_t step, std::int64_t tid, std::int64_t stack, std::int64_t samples,
                          base::Nanos wall) {
    writer.add(store::StackSample{1, tid, step, stack, samples, wall, wall / 2});
  };
  sample(0, 1, 5, 50, 95 * kSampledMs);  // warm-up: left out of the steady-state graph
  for (std::int64_t step = 1; step < 5; ++step) {
    sample(step, 1, 5, 4, 40 * kSampledMs);
    sample(step, 1, 4, 1, 10 * kSampledMs);
    sample(step, 1, 6, 2, 20 * kSampledMs);
    sample(step, 1, 7, 2, 20 * kSampledMs);
    sample(step, 1, 2, 1, 10 * kSampledMs);
  }
  sample(2, 1, 9, 1, 1 * kSampledMs);
  sample(3, 1, 8, 1, 1 * kSampledMs);
  sample(3, 2, 11, 1, 3 * kSampledMs);
  EXPECT_TRUE(writer.close(kSampledStart + 5 * kSampledStep).ok());
  return path;
}

}  // namespace torchscope::analyzer::testing
