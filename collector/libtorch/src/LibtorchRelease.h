// Whether the program's libtorch is of the release the plugin was built against. The plugin calls into libtorch's
// C++ interface, which changes between releases; the dynamic loader binds the plugin to the libtorch_cpu.so the
// program loaded (same soname), whichever file that is, so only its release says whether the plugin fits.
#pragma once

#include <filesystem>
#include <string>

namespace torchscope::collector::libtorch {

// The release of the libtorch at `library` (.../torch/lib/libtorch_cpu.so of a wheel: torch/version.py;
// .../libtorch/lib/libtorch_cpu.so of the C++ distribution: libtorch/build-version), "" when no file beside it says.
std::string releaseBeside(const std::filesystem::path& library);

// "" when `loaded` (the program's libtorch_cpu.so) is of release `built_release`, else why not (a release that no
// file beside it names included). A local version suffix (+cpu, +cu128) changes what is linked in, not the C++
// interface, so it is not compared.
std::string libtorchMismatch(const std::string& loaded, const std::string& built_release);

}  // namespace torchscope::collector::libtorch
