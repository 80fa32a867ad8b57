// `torchscope optimize` on a tiny TorchScript model the test makes with the venv's Python.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "torchscope/compiler/Optimize.h"
#include "torchscope/compiler/Process.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMakeModel = R"(
import sys, torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Linear(8, 4)
    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.head(y.mean(dim=(2, 3)))
torch.manual_seed(0)
torch.jit.trace(Net().eval(), torch.randn(2, 3, 16, 16)).save(sys.argv[1])
)";

TEST(Optimize, ParsesShapes) {
  auto shape = parseShape("1,3,8x8");
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(*shape, (std::vector<std::int64_t>{1, 3, 8, 8}));
  EXPECT_FALSE(parseShape("1,,3").ok());
  EXPECT_FALSE(parseShape("a").ok());
  EXPECT_FALSE(parseShape("1,0").ok());
}

TEST(Optimize, MeasuresVariantsOfATinyModel) {
  const torchscope::testing::TempDir scratch;
  const fs::path& dir = scratch.path();
  const fs::path model = dir / "net.pt";
  ProcessSpec make;
  make.argv = {TORCHSCOPE_PYTHON, "-c", kMakeModel, model.string()};
  make.stderr_path = (dir / "make.err").string();
  auto made = runProcess(make);
  ASSERT_TRUE(made.ok());
  ASSERT_EQ(made->exit_code, 0) << readTextFile(make.stderr_path);

  ProcessSpec run;
  run.argv = {TORCHSCOPE_BINARY_DIR "/bin/torchscope", "optimize", model.string(), "--input", "2,3,16,16",
              "--rounds", "2", "--iterations", "5", "--format", "json"};
  run.environment["TORCHSCOPE_PYTHON"] = TORCHSCOPE_PYTHON;  // libtorch comes from the job's torch
  run.stdout_path = (dir / "out.json").string();
  run.stderr_path = (dir / "err.txt").string();
  auto result = runProcess(run);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->exit_code, 0) << readTextFile(run.stderr_path);
  const auto report = nlohmann::json::parse(readTextFile(run.stdout_path), nullptr, false);
  ASSERT_TRUE(report.is_object()) << readTextFile(run.stdout_path);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& variant : report["variants"]) by_name[variant["name"]] = variant;
  for (const char* name : {"baseline (eval, no_grad)", "inference-mode", "freeze+optimize_for_inference", "channels-last", "bf16"}) {
    ASSERT_TRUE(by_name.count(name)) << name;
    ASSERT_TRUE(by_name[name]["available"].get<bool>()) << by_name[name].dump();
    EXPECT_GT(by_name[name]["latency_ms"]["median"].get<double>(), 0) << name;
    EXPECT_TRUE(by_name[name]["parity"]["ok"].get<bool>()) << by_name[name].dump();
  }
  EXPECT_DOUBLE_EQ(by_name["baseline (eval, no_grad)"]["speedup"]["median"].get<double>(), 1.0);
  EXPECT_FALSE(by_name["int8 dynamic quantization"]["available"].get<bool>());

  run.argv = {TORCHSCOPE_BINARY_DIR "/bin/torchscope", "optimize", (dir / "missing.pt").string(), "--input", "1"};
  result = runProcess(run);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 2);
  run.argv = {TORCHSCOPE_BINARY_DIR "/bin/torchscope", "optimize", model.string(), "--input", "1,5"};
  result = runProcess(run);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 2);
}

}  // namespace
}  // namespace torchscope::compiler
