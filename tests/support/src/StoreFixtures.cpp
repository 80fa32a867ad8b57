#include "torchscope/testing/StoreFixtures.h"

#include <fstream>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include "Tables.h"
#include "torchscope/store/Writer.h"

namespace torchscope::testing {

namespace {

using nlohmann::json;
namespace st = torchscope::store;

// Values a fixture row does not need to spell out, where the record's own default is not what the analyzer reads
// (JSON columns hold valid JSON).
const json& columnDefaults(const std::string& table) {
  static const json defaults = {
      {"run", {{"source", "fixture"}}},
      {"devices", {{"properties", "{}"}}},
      {"api_calls", {{"api", "runtime"}}},
      {"syncs", {{"stack", "[]"}}},
      {"cpu_ops", {{"category", "cpu_op"}, {"args", "{}"}}},
      {"compiles", {{"status", "ok"}, {"restart_reasons", "[]"}}},
      {"graph_breaks", {{"hints", "[]"}, {"user_stack", "[]"}, {"stack", "[]"}}},
      {"recompiles", {{"guard_failures", "[]"}, {"stack", "[]"}}},
      {"steps", {{"source", "marker"}}},
      {"memory_holders", {{"stack", "[]"}}},
      {"compiled_regions", {{"frames", "[]"}}},
      {"op_census", {{"frequent_ops", "[]"}, {"sites", "[]"}}},
      {"capture_window", {{"intervals", "[]"}}},
  };
  static const json none = json::object();
  const auto found = defaults.find(table);
  return found == defaults.end() ? none : *found;
}

// Fixture rows name the fields of store/Records.h; one column of the table is named otherwise than its field.
std::string fieldName(std::string_view table, std::string_view column) {
  return table == "steps" && column == "step" ? "index" : std::string(column);
}

// One record of type T from a fixture row, column by column as Tables.h lists them.
template <class T>
T recordFrom(const json& row) {
  using Traits = st::tables::Traits<T>;
  const json& defaults = columnDefaults(std::string(Traits::kTable));
  T record;
  auto fill = [&](const auto& column) {
    const std::string name = fieldName(Traits::kTable, column.name);
    const json* value = row.contains(name) ? &row.at(name) : defaults.contains(name) ? &defaults.at(name) : nullptr;
    if (value == nullptr) return;
    auto& field = record.*(column.member);
    using Field = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<Field, std::string>) {
      field = value->is_string() ? value->template get<std::string>() : value->dump();  // a JSON column as JSON
    } else {
      field = value->template get<Field>();
    }
  };
  std::apply([&](const auto&... columns) { (fill(columns), ...); }, Traits::columns());
  return record;
}

// Adds `row` as a record of the type whose table is `table`; false when no type has that table.
template <class... Records>
bool addRow(st::Writer& writer, const std::string& table, const json& row) {
  return ((st::tables::Traits<Records>::kTable == table ? (writer.add(recordFrom<Records>(row)), true) : false) || ...);
}

template <class... Records>
bool addRowOf(st::Writer& writer, const std::string& table, const json& row, std::tuple<Records...>*) {
  return addRow<Records...>(writer, table, row);
}

void addFixtureRow(st::Writer& writer, const std::string& table, const json& row) {
  const bool added = addRowOf(writer, table, row, static_cast<st::RowRecords*>(nullptr));
  if (!added) throw std::runtime_error("unknown fixture table " + table);
}

json expand(const json& entry, std::int64_t i) {
  json row = entry.at("row");
  const std::int64_t shift = entry.value("stride_ns", std::int64_t{0}) * i;
  for (const char* key : {"start_ns", "end_ns", "ts_ns"}) {
    if (row.contains(key)) row[key] = row[key].get<std::int64_t>() + shift;
  }
  for (const auto& key : entry.value("increment", json::array())) {
    const std::string name = key.get<std::string>();
    row[name] = row.value(name, std::int64_t{0}) + i;
  }
  // {"value": 1048576}: the field grows by that much per repetition.
  if (const auto it = entry.find("increment_by"); it != entry.end() && it->is_object()) {
    for (const auto& [name, amount] : it->items()) {
      row[name] = row.value(name, std::int64_t{0}) + amount.get<std::int64_t>() * i;
    }
  }
  return row;
}

}  // namespace

std::string buildStore(const json& fixture, const std::string& store_path) {
  try {
    auto writer = st::Writer::open(store_path);
    if (!writer) return writer.error().message;
    const st::RunInfo run = recordFrom<st::RunInfo>(fixture.value("run", json::object()));
    (*writer)->setRun(run);
    for (const auto& [table, rows] : fixture.items()) {
      if (table == "run" || table == "description") continue;
      for (const auto& entry : rows) {
        if (entry.contains("repeat")) {
          for (std::int64_t i = 0; i < entry.at("repeat").get<std::int64_t>(); ++i) {
            addFixtureRow(**writer, table, expand(entry, i));
          }
        } else {
          addFixtureRow(**writer, table, entry);
        }
      }
    }
    auto closed = (*writer)->close(run.end_ns);
    return closed ? "" : closed.error().message;
  } catch (const std::exception& e) {
    return std::string("bad fixture: ") + e.what();
  }
}

std::string buildStoreFromFile(const std::string& fixture_path, const std::string& store_path) {
  std::ifstream in(fixture_path);
  if (!in) return "cannot read " + fixture_path;
  auto fixture = json::parse(in, nullptr, false, true);
  if (fixture.is_discarded()) return "invalid JSON in " + fixture_path;
  return buildStore(fixture, store_path);
}

}  // namespace torchscope::testing
