// Text helpers shared by the timeline model and its views. Qt-free; none of them fail.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "torchscope/base/Clock.h"

namespace torchscope::gui {

// "1.25 ms", "830 ns", "2.00 s": three significant digits, unit chosen by magnitude.
[[nodiscard]] std::string formatDuration(base::Nanos ns);
// "4.0 MiB", "512 B".
[[nodiscard]] std::string formatBytes(std::int64_t bytes);
// "file:line", or "file" when the line is unknown, or "" when the file is.
[[nodiscard]] std::string sourceLocation(std::string_view file, std::int64_t line);
// The part after the last '/'.
[[nodiscard]] std::string_view baseName(std::string_view path);
// ASCII case-insensitive substring test; an empty needle matches everything.
[[nodiscard]] bool containsIgnoringCase(std::string_view haystack, std::string_view needle);
// A stable colour for a label (0xRRGGBB): the same name gets the same colour in every run, and
// numbered instances ("step 3", "kernel_1") share one.
[[nodiscard]] std::uint32_t colourForName(std::string_view name);

}  // namespace torchscope::gui
