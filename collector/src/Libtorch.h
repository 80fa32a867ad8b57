// A native program (no Python) with libtorch loaded: the collector's libtorch plugin records its requests and
// operators (collector/libtorch, docs/collector.md *Native programs with libtorch*).
#pragma once

#include <string>

namespace torchscope::collector {

// True when libtorch is loaded in this process now.
[[nodiscard]] bool libtorchLoaded();

// Loads the plugin found beside this library and attaches it to the collector's C ABI. "" when attached, else why
// not (no plugin built, another libtorch release, ...).
[[nodiscard]] std::string attachLibtorchPlugin();

}  // namespace torchscope::collector
