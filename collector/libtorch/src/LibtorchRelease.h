// Whether the program's libtorch is the one the plugin was built against. The plugin calls into libtorch's C++
// interface, which changes between releases, so it attaches only to the very library it was linked with, or to one
// of the same release (another copy of the same wheel, the C++ distribution of that release).
#pragma once

#include <filesystem>
#include <string>

namespace torchscope::collector::libtorch {

// The release of the libtorch at `library` (.../torch/lib/libtorch_cpu.so of a wheel: torch/version.py;
// .../libtorch/lib/libtorch_cpu.so of the C++ distribution: libtorch/build-version), "" when no file beside it says.
std::string releaseBeside(const std::filesystem::path& library);

// "" when `loaded` (the program's libtorch_cpu.so) is `built_library` or of release `built_release`, else why not.
// A local version suffix (+cpu, +cu128) changes what is linked in, not the C++ interface, so it is not compared.
std::string libtorchMismatch(const std::string& loaded, const std::string& built_library,
                             const std::string& built_release);

}  // namespace torchscope::collector::libtorch
