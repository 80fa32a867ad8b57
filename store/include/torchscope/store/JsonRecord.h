// A record (or an object of a JSON column, Table.h `Fields`) from a JSON object, column by column as its
// declaration lists them: a column the object names takes its value, any other keeps the struct's default. The
// collector decodes the bridge's records with it, the store its JSON columns of declared objects (a census site).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "torchscope/store/Table.h"

namespace torchscope::store {

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

template <schema::Fields T>
T recordFromJson(const nlohmann::json& in) {
  using schema::Role;
  T out;
  if (!in.is_object()) return out;
  schema::forEachColumn<T>([&](const auto& column) {
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

// The objects of a JSON array column, each decoded as T; an element that is no object is left out.
template <schema::Fields T>
std::vector<T> recordsFromJsonArray(const std::string& text) {
  std::vector<T> out;
  const nlohmann::json array = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!array.is_array()) return out;
  for (const auto& element : array) {
    if (element.is_object()) out.push_back(recordFromJson<T>(element));
  }
  return out;
}

}  // namespace torchscope::store
