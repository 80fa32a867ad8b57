// The libtorch plugin attaches only to a libtorch of the release it was built against
// (collector/libtorch/src/LibtorchRelease.h), read from the files a wheel and the C++ distribution put beside it.
#include "LibtorchRelease.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "torchscope/testing/TempDir.h"

namespace torchscope::collector::libtorch {
namespace {

namespace fs = std::filesystem;

// A libtorch_cpu.so in DIR/lib, with `name` (version.py or build-version) holding `text` in DIR.
std::string libtorchIn(const fs::path& root, const std::string& name, const std::string& text) {
  fs::create_directories(root / "lib");
  std::ofstream(root / "lib" / "libtorch_cpu.so") << "not a library";
  if (!name.empty()) std::ofstream(root / name) << text;
  return (root / "lib" / "libtorch_cpu.so").string();
}

TEST(LibtorchRelease, IsReadFromTheWheelsVersionFileAndTheDistributionsBuildVersion) {
  const testing::TempDir dir;
  const std::string wheel = libtorchIn(dir.path() / "torch", "version.py",
                                       "from typing import Optional\n__all__ = ['__version__']\n"
                                       "__version__ = '2.13.0+cpu'\ndebug = False\n");
  const std::string distribution = libtorchIn(dir.path() / "libtorch", "build-version", "2.11.0+cu128\n");
  const std::string bare = libtorchIn(dir.path() / "bare", "", "");
  EXPECT_EQ(releaseBeside(wheel), "2.13.0+cpu");
  EXPECT_EQ(releaseBeside(distribution), "2.11.0+cu128");
  EXPECT_EQ(releaseBeside(bare), "");
  EXPECT_EQ(releaseBeside(dir.file("nowhere/lib/libtorch_cpu.so")), "");
}

TEST(LibtorchRelease, TheSameReleaseIsAcceptedWhateverItsLocalSuffix) {
  const testing::TempDir dir;
  const std::string cpu = libtorchIn(dir.path() / "cpu", "version.py", "__version__ = '2.13.0+cpu'\n");
  const std::string cuda = libtorchIn(dir.path() / "cuda", "build-version", "2.13.0+cu130");
  EXPECT_EQ(libtorchMismatch(cpu, "2.13.0"), "");
  EXPECT_EQ(libtorchMismatch(cuda, "2.13.0"), "");
  EXPECT_EQ(libtorchMismatch(cuda, "2.13.0+cpu"), "");
}

TEST(LibtorchRelease, AnotherReleaseOrAnUnknownOneIsRefusedWithBothNamed) {
  const testing::TempDir dir;
  const std::string older = libtorchIn(dir.path() / "older", "version.py", "__version__ = '2.11.0+cu128'\n");
  const std::string unknown = libtorchIn(dir.path() / "unknown", "", "");
  EXPECT_EQ(libtorchMismatch(older, "2.13.0"), "the program's libtorch (" + older +
                                                   ", release 2.11.0+cu128) is not of the release this plugin was "
                                                   "built for (2.13.0)");
  EXPECT_EQ(libtorchMismatch(unknown, "2.13.0"), "the program's libtorch (" + unknown +
                                                     ", release unknown) is not of the release this plugin was "
                                                     "built for (2.13.0)");
  // 2.1.3 is not 2.13: the release is compared whole, not as a prefix.
  const std::string close = libtorchIn(dir.path() / "close", "build-version", "2.1.3");
  EXPECT_NE(libtorchMismatch(close, "2.13"), "");
}

}  // namespace
}  // namespace torchscope::collector::libtorch
