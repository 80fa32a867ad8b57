// torchscope stats RUN.db|RUN_DIR [--format text|json]: rows per kind, the run's metadata, its memory and
// diagnostics (for a run folder: of each store in it, by rank).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "Commands.h"
#include "Output.h"
#include "torchscope/analyzer/CaptureWindow.h"
#include "torchscope/analyzer/LineTable.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/base/JsonText.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::cli {

namespace {

struct StatsOptions {
  std::string store;
  std::string format = "text";
};

// One memory series of one device: its highest value and its last one.
struct SeriesFigures {
  std::string series;
  std::int64_t device = -1;
  std::int64_t samples = 0;
  std::int64_t max = 0;
  std::int64_t last = 0;
};

std::vector<SeriesFigures> memorySeries(const store::Reader& reader) {
  std::vector<SeriesFigures> figures;
  auto done = reader.query(
      "SELECT series, device, count(*), max(value), "
      "(SELECT value FROM memory_samples l WHERE l.series = m.series AND l.device = m.device "
      " ORDER BY ts_ns DESC, id DESC LIMIT 1) "
      "FROM memory_samples m GROUP BY series, device ORDER BY device, series",
      [&](const store::Row& row) {
        figures.push_back({row.text(0), row.integer(1), row.integer(2), row.integer(3), row.integer(4)});
      });
  if (!done) failWith(done.error());
  return figures;
}

// Counts (`*_count`) print as numbers, everything else as bytes.
std::string formatSeriesValue(const std::string& series, std::int64_t value) {
  return series.ends_with("_count") ? std::to_string(value) : analyzer::formatBytes(static_cast<double>(value));
}

void storeStats(const std::string& path, const StatsOptions& options, nlohmann::json* json_out) {
  auto reader = store::Reader::open(path);
  if (!reader) failWith(reader.error());
  auto counts = (*reader)->counts();
  if (!counts) failWith(counts.error());
  auto run = (*reader)->run();
  if (!run) failWith(run.error());
  auto diagnostics = (*reader)->load<store::Diagnostic>();
  if (!diagnostics) failWith(diagnostics.error());
  const analyzer::CaptureWindow window = analyzer::captureWindowOf(**reader);
  // Host time by line (stores with stack samples only, so that other stores print as they always did).
  analyzer::LineTable lines;
  if (counts->count("stack_samples") && counts->at("stack_samples") > 0) {
    auto table = analyzer::lineTable(**reader);
    if (!table) failWith(table.error());
    lines = std::move(*table);
  }

  if (options.format == "json") {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [table, count] : *counts) out[table] = count;
    out["schema_version"] = (*reader)->schemaVersion();
    const double duration =
        run->end_ns >= run->start_ns ? static_cast<double>(base::spanNanos(run->start_ns, run->end_ns)) * 1e-9 : -1;
    out["run"] = {{"command_line", run->command_line}, {"source", run->source},
                  {"torch_version", run->torch_version}, {"python_version", run->python_version},
                  {"cuda_version", run->cuda_version},   {"gpu_name", run->gpu_name},
                  {"exit_code", run->exit_code},         {"duration_s", duration}};
    nlohmann::json diag = nlohmann::json::array();
    for (const auto& d : *diagnostics) {
      diag.push_back({{"source", d.source}, {"severity", d.severity}, {"message", d.message}, {"count", d.count}});
    }
    out["diagnostics"] = diag;
    nlohmann::json memory = nlohmann::json::array();
    for (const auto& figures : memorySeries(**reader)) {
      memory.push_back({{"series", figures.series}, {"device", figures.device}, {"samples", figures.samples},
                        {"max", figures.max}, {"last", figures.last}});
    }
    out["memory"] = memory;
    // The part of the run the store kept (docs/FORMAT.md, capture_window); null for the whole run.
    out["window"] = nullptr;
    if (!window.whole()) {
      out["window"] = analyzer::windowJson(window);
      out["window"]["description"] = window.describe();
    }
    if (lines.recorded) out["lines"] = nlohmann::json::parse(analyzer::renderLines(lines, analyzer::Format::kJson));
    out["path"] = path;
    *json_out = std::move(out);
    return;
  }
  std::cout << fmt::format("{} (store schema v{})\n", path, (*reader)->schemaVersion());
  if (!run->command_line.empty()) std::cout << fmt::format("  command: {}\n", run->command_line);
  if (!run->torch_version.empty()) std::cout << fmt::format("  torch {}  python {}\n", run->torch_version, run->python_version);
  if (!window.whole()) std::cout << fmt::format("  {}\n", window.describe());
  for (const auto& [table, count] : *counts) {
    if (table == "strings") continue;
    std::cout << fmt::format("  {:<16} {:>10}\n", table, count);
  }
  const auto memory = memorySeries(**reader);
  if (!memory.empty()) std::cout << "  memory (highest / last):\n";
  for (const auto& figures : memory) {
    std::cout << fmt::format("    {:<6} {:<26} {:>12} / {:>12}  ({} samples)\n",
                             figures.device < 0 ? "host" : fmt::format("GPU {}", figures.device), figures.series,
                             formatSeriesValue(figures.series, figures.max),
                             formatSeriesValue(figures.series, figures.last), figures.samples);
  }
  for (const auto& d : *diagnostics) {
    std::cout << fmt::format("  {} [{}] {}{}\n", d.severity, d.source, d.message,
                             d.count > 1 ? fmt::format(" (x{})", d.count) : "");
  }
  analyzer::RenderOptions render;
  std::error_code no_directory;
  render.current_directory = std::filesystem::current_path(no_directory).string();
  std::cout << analyzer::renderLines(lines, analyzer::Format::kText, render);
}

void runStats(const StatsOptions& options) {
  std::error_code error;
  const bool folder = std::filesystem::is_directory(options.store, error);
  auto stores = store::expandRunFolders({options.store});
  if (!stores) failWith(stores.error());
  noteCompanionStores("stats", options.store);
  nlohmann::json per_store = nlohmann::json::array();
  for (const auto& path : *stores) {
    nlohmann::json one;
    storeStats(path, options, &one);
    per_store.push_back(std::move(one));
  }
  if (options.format != "json") return;
  // One store keeps its object as it always was; a run folder lists its stores.
  std::cout << base::dumpJson(
                   folder ? nlohmann::json{{"run_folder", options.store}, {"stores", per_store}} : per_store.front(), 2)
            << "\n";
}

}  // namespace

void addStatsCommand(CLI::App& app) {
  auto options = std::make_shared<StatsOptions>();
  auto* cmd = app.add_subcommand(
      "stats",
      "Count the rows of each kind in a store and show its memory series (highest and last value) and, for a "
      "run with stack samples, the lines of your code that took the most host time");
  cmd->add_option("store", options->store, "The store (RUN.db), or a run folder (each of its stores, by rank)")->required();
  cmd->add_option("--format", options->format, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] { runStats(*options); });
}

}  // namespace torchscope::cli
