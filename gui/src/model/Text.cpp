#include "torchscope/gui/Text.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace torchscope::gui {

std::string formatDuration(base::Nanos ns) {
  const double magnitude = std::abs(static_cast<double>(ns));
  constexpr std::array<std::pair<double, const char*>, 4> kUnits{
      {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1.0, "ns"}}};
  for (const auto& [scale, unit] : kUnits) {
    if (magnitude >= scale || scale == 1.0) {
      const double value = static_cast<double>(ns) / scale;
      if (scale == 1.0) return fmt::format("{} ns", ns);
      const int decimals = std::abs(value) >= 100 ? 0 : (std::abs(value) >= 10 ? 1 : 2);
      return fmt::format("{:.{}f} {}", value, decimals, unit);
    }
  }
  return fmt::format("{} ns", ns);
}

std::string formatBytes(std::int64_t bytes) {
  constexpr std::array<const char*, 5> kUnits{"B", "KiB", "MiB", "GiB", "TiB"};
  auto value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (std::abs(value) >= 1024 && unit + 1 < kUnits.size()) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string sourceLocation(std::string_view file, std::int64_t line) {
  if (file.empty()) return {};
  return line >= 0 ? fmt::format("{}:{}", file, line) : std::string(file);
}

std::string_view baseName(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool containsIgnoringCase(std::string_view haystack, std::string_view needle) {
  const auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
  const auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                              [&](char a, char b) { return lower(a) == lower(b); });
  return it != haystack.end() || needle.empty();
}

std::uint32_t colourForName(std::string_view name) {
  // Numbered instances share a colour ("step 3" and "step 4", "triton_poi_fused_add_0" and "_1").
  while (!name.empty() && (std::isdigit(static_cast<unsigned char>(name.back())) || name.back() == ' ')) {
    name.remove_suffix(1);
  }
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a: stable across runs and platforms
  for (const char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  const double hue = static_cast<double>(hash % 360);
  const double saturation = 0.45 + static_cast<double>((hash >> 16) % 20) / 100.0;
  const double value = 0.78 + static_cast<double>((hash >> 32) % 12) / 100.0;
  const double chroma = value * saturation;
  const double h = hue / 60.0;
  const double second = chroma * (1 - std::abs(std::fmod(h, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  switch (static_cast<int>(h)) {
    case 0: r = chroma, g = second; break;
    case 1: r = second, g = chroma; break;
    case 2: g = chroma, b = second; break;
    case 3: g = second, b = chroma; break;
    case 4: r = second, b = chroma; break;
    default: r = chroma, b = second; break;
  }
  const double m = value - chroma;
  const auto channel = [m](double c) { return static_cast<std::uint32_t>(std::lround((c + m) * 255.0)); };
  return (channel(r) << 16) | (channel(g) << 8) | channel(b);
}

}  // namespace torchscope::gui
