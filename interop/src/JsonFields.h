// Type-checked reads from nlohmann::json values: foreign files hold any type under any key, and
// a wrong type must read as "absent", never throw.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace torchscope::interop::json_fields {

using Json = nlohmann::json;

inline const Json* find(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

inline std::optional<std::int64_t> asInt(const Json* value) {
  if (value == nullptr) return std::nullopt;
  if (value->is_number_unsigned()) {
    const auto v = value->get<std::uint64_t>();
    // CUDA writes "no stream" as 2^32-1 and "no id" as 2^64-1: keep them as -1.
    if (v == 0xffffffffULL || v > static_cast<std::uint64_t>(INT64_MAX)) return -1;
    return static_cast<std::int64_t>(v);
  }
  if (value->is_number_integer()) return value->get<std::int64_t>();
  if (value->is_number_float()) {
    const double d = value->get<double>();
    if (!std::isfinite(d) || std::fabs(d) > 9.2e18) return std::nullopt;
    return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

inline std::optional<double> asDouble(const Json* value) {
  if (value == nullptr || !value->is_number()) return std::nullopt;
  const double d = value->get<double>();
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

inline std::int64_t getInt(const Json& object, std::string_view key, std::int64_t fallback = -1) {
  return asInt(find(object, key)).value_or(fallback);
}

inline std::optional<double> getDouble(const Json& object, std::string_view key) {
  return asDouble(find(object, key));
}

inline std::string getString(const Json& object, std::string_view key) {
  const Json* value = find(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

// Microseconds (a JSON number, integral or fractional) to integer nanoseconds.
inline std::optional<std::int64_t> microsToNanos(const Json* value) {
  if (value == nullptr) return std::nullopt;
  if (value->is_number_integer() || value->is_number_unsigned()) {
    const auto us = asInt(value);
    if (!us || *us < INT64_MIN / 1000 || *us > INT64_MAX / 1000) return std::nullopt;
    return *us * 1000;
  }
  const auto us = asDouble(value);
  if (!us || std::fabs(*us) > 9.0e15) return std::nullopt;  // beyond INT64_MAX nanoseconds
  const double whole = std::trunc(*us);
  return static_cast<std::int64_t>(whole) * 1000 + std::llround((*us - whole) * 1000.0);
}

}  // namespace torchscope::interop::json_fields
