// A store record from one of the bridge's JSON objects, column by column as the record's table declares them
// (store/Records.h): a column the object names takes its value, any other keeps the struct's default. What a
// record needs beyond its columns (the pid, a default taken from another column) its caller sets.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

#include "torchscope/store/Records.h"

namespace torchscope::collector {

// An integer field: JSON integers as they are, reals truncated, booleans 0/1; anything else is `fallback`.
inline std::int64_t integerOf(const nlohmann::json& value, std::int64_t fallback) {
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_float()) return static_cast<std::int64_t>(value.get<double>());
  if (value.is_boolean()) return value.get<bool>() ? 1 : 0;
  return fallback;
}

// A text field: a string as it is, null as "", any other value as its JSON text.
inline std::string textOf(const nlohmann::json& value) {
  if (value.is_null()) return "";
  return value.is_string() ? value.get<std::string>() : value.dump();
}

template <store::schema::Record T>
T recordFromJson(const nlohmann::json& in) {
  using store::schema::Role;
  T out;
  store::schema::forEachColumn<T>([&](const auto& column) {
    auto& field = out.*(column.member);
    using Field = std::decay_t<decltype(field)>;
    const auto it = in.find(column.name);
    const bool given = it != in.end();
    if constexpr (std::is_same_v<Field, std::string>) {
      if (column.role == Role::kJsonArray) {
        field = given && it->is_array() ? it->dump() : "[]";
      } else if (column.role == Role::kJsonObject) {
        field = given && it->is_object() ? it->dump() : "{}";
      } else if (given) {
        field = textOf(*it);
      }
    } else if constexpr (std::is_same_v<Field, bool>) {
      if (given) field = integerOf(*it, field ? 1 : 0) == 1;
    } else if constexpr (std::is_same_v<Field, std::int64_t>) {
      if (given) field = integerOf(*it, field);
    } else {
      if (given && it->is_number()) field = it->template get<Field>();
    }
  });
  return out;
}

}  // namespace torchscope::collector
