// torchscope stats RUN.db [--format text|json]: rows per kind, the run's metadata and diagnostics.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>

#include "Commands.h"
#include "torchscope/store/Reader.h"

namespace torchscope::cli {

namespace {

struct StatsOptions {
  std::string store;
  std::string format = "text";
};

void runStats(const StatsOptions& options) {
  auto reader = store::Reader::open(options.store);
  if (!reader) fail(kExitUsage, reader.error().message);
  auto counts = (*reader)->counts();
  if (!counts) fail(kExitFailure, counts.error().message);
  auto run = (*reader)->run();
  if (!run) fail(kExitFailure, run.error().message);
  auto diagnostics = (*reader)->load<store::Diagnostic>();
  if (!diagnostics) fail(kExitFailure, diagnostics.error().message);

  if (options.format == "json") {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [table, count] : *counts) out[table] = count;
    out["schema_version"] = (*reader)->schemaVersion();
    const double duration = run->end_ns >= run->start_ns ? static_cast<double>(run->end_ns - run->start_ns) * 1e-9 : -1;
    out["run"] = {{"command_line", run->command_line}, {"source", run->source},
                  {"torch_version", run->torch_version}, {"python_version", run->python_version},
                  {"cuda_version", run->cuda_version},   {"gpu_name", run->gpu_name},
                  {"exit_code", run->exit_code},         {"duration_s", duration}};
    nlohmann::json diag = nlohmann::json::array();
    for (const auto& d : *diagnostics) {
      diag.push_back({{"source", d.source}, {"severity", d.severity}, {"message", d.message}, {"count", d.count}});
    }
    out["diagnostics"] = diag;
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("{} (store schema v{})\n", options.store, (*reader)->schemaVersion());
  if (!run->command_line.empty()) std::cout << fmt::format("  command: {}\n", run->command_line);
  if (!run->torch_version.empty()) std::cout << fmt::format("  torch {}  python {}\n", run->torch_version, run->python_version);
  for (const auto& [table, count] : *counts) {
    if (table == "strings") continue;
    std::cout << fmt::format("  {:<16} {:>10}\n", table, count);
  }
  for (const auto& d : *diagnostics) {
    std::cout << fmt::format("  {} [{}] {}{}\n", d.severity, d.source, d.message,
                             d.count > 1 ? fmt::format(" (x{})", d.count) : "");
  }
}

}  // namespace

void addStatsCommand(CLI::App& app) {
  auto options = std::make_shared<StatsOptions>();
  auto* cmd = app.add_subcommand("stats", "Count the rows of each kind in a store");
  cmd->add_option("store", options->store, "The store (RUN.db)")->required();
  cmd->add_option("--format", options->format, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] { runStats(*options); });
}

}  // namespace torchscope::cli
