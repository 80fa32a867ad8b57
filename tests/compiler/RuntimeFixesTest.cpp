// The runtime patches of torchscope_compiler.runtime, checked in a real interpreter (no Inductor compiling).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

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

// The main thread runs the user's code while another thread is inside torch.compile (its backend
// waits until the main thread is done): the fixes must still apply there. torch 2.13's
// torch.compiler.is_compiling() is True on every thread during any compile.
constexpr const char* kWhileAnotherThreadCompiles = R"(
import threading
import torch
from torchscope_compiler import runtime
assert runtime.apply("inference-mode,channels-last") == ["inference-mode", "channels-last"]
compiling, done = threading.Event(), threading.Event()
def waiting_backend(graph_module, example_inputs):
    compiling.set()
    done.wait(timeout=120)
    return graph_module.forward
def worker():
    torch.compile(lambda x: x.sin() + 1, backend=waiting_backend)(torch.randn(4))
thread = threading.Thread(target=worker)
thread.start()
assert compiling.wait(timeout=120), "the other thread never compiled"
try:
    with torch.no_grad():
        inference = torch.is_inference_mode_enabled()
    conv = torch.nn.Conv2d(3, 4, 3)
    conv(torch.randn(1, 3, 8, 8))
    channels_last = conv.weight.is_contiguous(memory_format=torch.channels_last)
finally:
    done.set()
    thread.join()
print(f"inference mode: {inference}, channels last: {channels_last}")
)";

// torch-compile compiles the outermost module of each call, torch's own classes included (Dynamo compiles nothing
// through nn.Sequential.compile()). Real Dynamo with the eager backend, so that no C++ is built.
constexpr const char* kCompilesTopModules = R"(
import torch
import torch._dynamo.utils as dynamo_utils
from torchscope_compiler import runtime
original = torch.compile
torch.compile = lambda model=None, **kwargs: original(model, backend="eager", **kwargs)
assert runtime.apply("torch-compile") == ["torch-compile"]
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(8, 8)
    def forward(self, x):
        return torch.relu(self.inner(x))
for model in (torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()), Net()):
    dynamo_utils.counters.clear()
    for _ in range(2):
        model(torch.randn(4, 8)).sum().backward()
    print(type(model).__name__, dict(dynamo_utils.counters["stats"]).get("unique_graphs", 0))
)";

// torch.compile(module) under the launcher's request recorder and the torch-compile fix, both wrappers of
// nn.Module.__call__: Dynamo must compile the module's forward, not a wrapper (whose one code object every compiled
// module would share, with its cache and recompile limit). Backend "eager": Dynamo traces, nothing is compiled.
constexpr const char* kCompiledUnderWrappers = R"(
import torch
from torchscope_compiler import runtime
from torchscope_compiler.requests import RequestRecorder
recorder = RequestRecorder(0.0)
recorder.install(torch, runtime.traced_check())
wrappers = [torch.nn.Module.__call__]
runtime.apply("torch-compile")
wrappers.append(torch.nn.Module.__call__)
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
    def forward(self, x):
        return self.lin(x).relu()
model = torch.compile(Net(), backend="eager")
model(torch.randn(2, 4))
entries = torch._C._dynamo.eval_frame._debug_get_cache_entry_list
print(len(entries(Net.forward.__code__)), [len(entries(w.__code__)) for w in wrappers], len(recorder.spans))
inner = Net()
@torch.compile(backend="eager")
def scaled(x):
    return inner(x) * 2  # a module called inside compiled code: the wrappers are inlined, nothing breaks the graph
scaled(torch.randn(2, 4))
print(sum(torch._dynamo.utils.counters["graph_break"].values()), len(recorder.spans))
)";

// quantize-dynamic's schemes in one interpreter each: torchao's quantize_ turns the Linear weights into its int8
// tensors (the model answers within int8's error); without torchao, without a Linear layer, or with an unknown
// scheme the model runs as it was and the reason is kept.
constexpr const char* kQuantizeSchemes = R"(
import sys
import torch
from torchscope_compiler import runtime
scheme = sys.argv[1]
if scheme == "no-torchao":
    sys.modules["torchao"] = None  # import torchao raises ImportError, as where it is not installed
    scheme = "int8-weight-only"
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).eval()
x = torch.randn(16, 64)
with torch.no_grad():
    expected = model(x)
convolutional = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3)).eval()
applied = runtime.apply("quantize-dynamic:" + scheme)
with torch.no_grad():
    got = model(x)
    convolutional(torch.randn(1, 3, 8, 8))
relative = float((got - expected).abs().max() / expected.abs().max())
print(applied, type(model[0].weight).__name__, relative < 0.1, relative > 0)
print(runtime.not_applicable.get("quantize-dynamic", ""))
)";

std::string runChecks(const char* code, const std::vector<std::string>& args = {}) {
  const torchscope::testing::TempDir scratch;
  const auto& dir = scratch.path();
  ProcessSpec spec;
  spec.argv = {TORCHSCOPE_PYTHON, "-c", code};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.environment["PYTHONPATH"] = TORCHSCOPE_SOURCE_DIR "/compiler/python";
  spec.stdout_path = (dir / "out.txt").string();
  spec.stderr_path = (dir / "err.txt").string();
  auto result = runProcess(spec);
  if (!result.ok()) return "could not run Python: " + result.error().message;
  if (result->exit_code != 0)
    return "exit code " + std::to_string(result->exit_code) + ": " + readTextFile(spec.stderr_path);
  return readTextFile(spec.stdout_path);
}

TEST(RuntimeFixes, PatchTorchAsDocumented) { EXPECT_EQ(runChecks(kCheck), "ok\n"); }

TEST(RuntimeFixes, TorchCompileCompilesTheOutermostModuleOfTorchsOwnClassesToo) {
  EXPECT_EQ(runChecks(kCompilesTopModules), "Sequential 1\nNet 1\n");
}

TEST(RuntimeFixes, DynamoCompilesTheModulesForwardNotTheWrappersOfModuleCall) {
  // Cache entries of forward, of the request recorder's wrapper and of the fix's; requests recorded. Then graph
  // breaks and requests after a compiled function that calls a module.
  EXPECT_EQ(runChecks(kCompiledUnderWrappers), "1 [0, 0] 1\n0 1\n");
}

TEST(RuntimeFixes, ApplyOnAThreadThatRunsWhileAnotherCompiles) {
  EXPECT_EQ(runChecks(kWhileAnotherThreadCompiles), "inference mode: True, channels last: True\n");
}

TEST(RuntimeFixes, QuantizeDynamicSchemesOfTorchaoQuantizeTheLinearLayers) {
  for (const char* scheme : {"int8-weight-only", "int8-dynamic"}) {
    EXPECT_EQ(runChecks(kQuantizeSchemes, {scheme}),
              "['quantize-dynamic'] Int8Tensor True True\nSequential has no nn.Linear layer\n")
        << scheme;
  }
}

TEST(RuntimeFixes, QuantizeDynamicWithoutTorchaoOrWithAnUnknownSchemeLeavesTheModelAsItWas) {
  const std::string without = runChecks(kQuantizeSchemes, {"no-torchao"});
  EXPECT_EQ(without.rfind("['quantize-dynamic'] Parameter True False\ntorchao is not importable here (", 0), 0U)
      << without;
  EXPECT_NE(without.find("): pip install torchao\n"), std::string::npos) << without;
  EXPECT_EQ(runChecks(kQuantizeSchemes, {"int4"}), "[] Parameter True False\n\n");
}

}  // namespace
}  // namespace torchscope::compiler
