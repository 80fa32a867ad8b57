#include "TestSupport.h"

#include <gtest/gtest.h>

#include <ctime>
#include <map>

#include "torchscope/store/Reader.h"
#include "torchscope/testing/Paths.h"
#include "torchscope/testing/StoreRows.h"

namespace torchscope::testing {

using nlohmann::json;

std::string corpus(const std::string& relative) { return corpusPath(relative).string(); }

std::string testData(const std::string& relative) { return sourcePath("tests/interop/data/" + relative).string(); }

namespace {

std::string utc(base::Nanos ns) {
  const std::time_t seconds = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

double micros(base::Nanos ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

json summarizeStore(const std::string& store_path) {
  const auto opened = openStore(store_path);
  if (!opened) return {};
  const store::Reader& reader = *opened;
  json out;
  auto counts = reader.counts();
  for (const auto& [table, count] : *counts) {
    if (table != "strings" && count > 0) out["counts"][table] = count;
  }
  const auto run = reader.run().value();
  out["run"] = {{"source", run.source}, {"start_utc", utc(run.start_wall_ns)}, {"gpu_name", run.gpu_name},
                {"torch_version", run.torch_version}};

  std::int64_t malformed = 0;
  for (const auto& diagnostic : rows<store::Diagnostic>(reader)) {
    if (diagnostic.severity == "warning") malformed += diagnostic.count;
  }
  out["malformed"] = malformed;

  // Memory: per series its sample count and highest value, per operation its event count and bytes.
  const auto samples = rows<store::MemorySample>(reader);
  for (const auto& sample : samples) {
    json& series = out["memory"]["series"][sample.series];
    if (series.is_null()) series = {{"samples", 0}, {"max", sample.value}};
    series["samples"] = series["samples"].get<std::int64_t>() + 1;
    series["max"] = std::max(series["max"].get<std::int64_t>(), sample.value);
  }
  for (const auto& event : rows<store::MemoryEvent>(reader)) {
    json& operation = out["memory"]["events"][event.operation];
    if (operation.is_null()) operation = {{"count", 0}, {"bytes", 0}};
    operation["count"] = operation["count"].get<std::int64_t>() + 1;
    operation["bytes"] = operation["bytes"].get<std::int64_t>() + event.bytes;
  }

  const auto compiles = rows<store::Compile>(reader);
  if (!compiles.empty()) {
    std::map<std::string, int> status;
    std::int64_t restarts = 0, hits = 0, misses = 0;
    base::Nanos dynamo = 0, total = 0;
    for (const auto& compile : compiles) {
      ++status[compile.status];
      restarts += static_cast<std::int64_t>(json::parse(compile.restart_reasons).size());
      hits += compile.cache_hit == 1;
      misses += compile.cache_hit == 0;
      dynamo += std::max<base::Nanos>(0, compile.dynamo_ns);
      total += compile.end_ns - compile.start_ns;
    }
    out["compiles"] = {{"status", status}, {"restarts", restarts}, {"fx_cache_hits", hits}, {"fx_cache_misses", misses},
                       {"dynamo_ms", dynamo / 1'000'000}, {"wall_ms", total / 1'000'000},
                       {"first_start_utc", utc(compiles.front().start_ns)},
                       {"first", "[" + std::to_string(compiles.front().frame_id) + "/" +
                                     std::to_string(compiles.front().frame_compile_id) + "] " + compiles.front().co_name}};
  }
  std::vector<std::string> breaks;
  for (const auto& graph_break : rows<store::GraphBreak>(reader)) {
    breaks.push_back(graph_break.file.empty() ? graph_break.reason.substr(0, 60)
                                              : graph_break.file.substr(graph_break.file.rfind('/') + 1) + ":" +
                                                    std::to_string(graph_break.line) + " " + graph_break.break_type);
  }
  if (!breaks.empty()) out["graph_breaks"] = breaks;
  std::map<std::string, int> causes;
  for (const auto& recompile : rows<store::Recompile>(reader)) ++causes[recompile.cause];
  if (!causes.empty()) out["recompile_causes"] = causes;
  std::map<std::string, int> ranks;
  for (const auto& process : rows<store::Process>(reader)) ++ranks[std::to_string(process.rank)];
  out["process_ranks"] = ranks;

  const auto kernels = rows<store::Kernel>(reader);
  if (!kernels.empty()) {
    std::map<std::string, double> per_stream;
    for (const auto& kernel : kernels) {
      per_stream[std::to_string(kernel.device) + "/" + std::to_string(kernel.stream)] += micros(kernel.end_ns - kernel.start_ns);
    }
    out["kernel_us_per_stream"] = per_stream;
    std::int64_t correlated = 0;
    for (const auto& kernel : kernels) correlated += kernel.correlation_id >= 0;
    out["kernels_with_correlation"] = correlated;
  }
  std::map<std::string, std::int64_t> copy_bytes;
  std::int64_t pageable = 0;
  for (const auto& copy : rows<store::Memcpy>(reader)) {
    copy_bytes[copy.copy_kind] += copy.bytes;
    pageable += copy.pageable;
  }
  if (!copy_bytes.empty()) out["memcpy"] = {{"bytes_by_kind", copy_bytes}, {"pageable", pageable}};
  std::map<std::string, int> sync_kinds;
  for (const auto& sync : rows<store::Sync>(reader)) ++sync_kinds[sync.sync_kind + " " + sync.op];
  if (!sync_kinds.empty()) out["syncs"] = sync_kinds;
  std::map<std::string, int> categories;
  for (const auto& op : rows<store::CpuOp>(reader)) ++categories[op.category];
  if (!categories.empty()) out["cpu_op_categories"] = categories;
  std::vector<std::int64_t> steps;
  for (const auto& step : rows<store::Step>(reader)) steps.push_back(step.index);
  if (!steps.empty()) out["steps"] = steps;
  std::vector<std::string> devices;
  for (const auto& device : rows<store::Device>(reader)) devices.push_back(std::to_string(device.device) + " " + device.name);
  if (!devices.empty()) out["devices"] = devices;
  return out;
}

}  // namespace torchscope::testing
