// The runtime patches of torchscope_compiler.runtime, checked in a real interpreter (no compiling).
#include <gtest/gtest.h>

#include <filesystem>

#include "torchscope/compiler/Process.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::compiler {
namespace {

constexpr const char* kCheck = R"(
import torch
from torchscope_compiler import runtime
seen = {}
def recording_compile(model=None, **kwargs):
    seen.update(kwargs)
    return model
torch.compile = recording_compile  # stands in for torch's, so nothing is compiled here
applied = runtime.apply("tensor-lr,inference-mode,capture-scalar-outputs,capture-dynamic-output-shape-ops,"
                        "channels-last,dynamic-shapes,compile-mode:default,no-such-fix,item-accumulate-tensor")
assert applied == ["tensor-lr", "inference-mode", "capture-scalar-outputs", "capture-dynamic-output-shape-ops",
                   "channels-last", "dynamic-shapes", "compile-mode"], applied
assert runtime.apply(["tensor-lr"]) == []  # idempotent
torch.compile(torch.nn.Linear(2, 2), dynamic=False)
assert seen == {"dynamic": True, "mode": "default"}, seen
opt = torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)
assert torch.is_tensor(opt.param_groups[0]["lr"]) and abs(float(opt.param_groups[0]["lr"]) - 0.1) < 1e-6
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
opt.step(); sched.step()
assert torch.is_tensor(opt.param_groups[0]["lr"]) and abs(float(opt.param_groups[0]["lr"]) - 0.05) < 1e-6
with torch.no_grad():
    assert torch.is_inference_mode_enabled()
assert torch._dynamo.config.capture_scalar_outputs and torch._dynamo.config.capture_dynamic_output_shape_ops
conv = torch.nn.Conv2d(3, 4, 3)
conv(torch.randn(1, 3, 8, 8))
assert conv.weight.is_contiguous(memory_format=torch.channels_last)
print("ok")
)";

TEST(RuntimeFixes, PatchTorchAsDocumented) {
  const torchscope::testing::TempDir scratch;
  const auto& dir = scratch.path();
  ProcessSpec spec;
  spec.argv = {TORCHSCOPE_PYTHON, "-c", kCheck};
  spec.environment["PYTHONPATH"] = TORCHSCOPE_SOURCE_DIR "/compiler/python";
  spec.stdout_path = (dir / "out.txt").string();
  spec.stderr_path = (dir / "err.txt").string();
  auto result = runProcess(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 0) << readTextFile(spec.stderr_path);
  EXPECT_EQ(readTextFile(spec.stdout_path), "ok\n");
}

}  // namespace
}  // namespace torchscope::compiler
