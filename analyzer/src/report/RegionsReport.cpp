// The compiled-region table as text, JSON, Markdown and HTML (`torchscope advise --regions`).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "Reports.h"
#include "torchscope/analyzer/Regions.h"
#include "torchscope/base/JsonText.h"

namespace torchscope::analyzer {

std::string regionSecondsText(double seconds) {
  if (seconds < 0) return "";
  if (seconds == 0) return "0 s";
  if (seconds >= 1) return fmt::format("{:.2f} s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.2f} ms", seconds * 1e3);
  return fmt::format("{:.1f} us", seconds * 1e6);
}

std::string regionPlaceText(const std::string& file, std::int64_t line) {
  if (file.empty()) return "";
  return line >= 0 ? fmt::format("{}:{}", file, line) : file;
}

std::string regionPayoffText(const Region& region) {
  if (region.payoff_calls < 0) return "";
  // Whole calls: the call after which the compile time is repaid.
  const double calls = std::ceil(region.payoff_calls);
  return region.paidOff() ? fmt::format("paid off after {:.0f} calls; this run made {}", calls, region.calls)
                          : fmt::format("would pay off after {:.0f} calls; this run made {}", calls, region.calls);
}

std::string regionsSavedText(double saved_s) {
  return saved_s >= 0 ? "saved " + regionSecondsText(saved_s) : "ran " + regionSecondsText(-saved_s) + " slower";
}

namespace {

std::string regionTime(double seconds) { return seconds < 0 ? "-" : regionSecondsText(seconds); }

std::string regionPlace(const std::string& file, std::int64_t line) {
  return file.empty() ? "?" : regionPlaceText(file, line);
}

std::string regionCausesText(const Region& region) {
  std::string text;
  for (const auto& [cause, count] : region.recompile_causes) {
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", cause, count);
  }
  return text;
}

// The facts of one region as lines "label: text" shared by the text, Markdown and HTML forms.
std::vector<std::pair<std::string, std::string>> regionLines(const Region& region) {
  std::vector<std::pair<std::string, std::string>> lines;
  std::string where = region.region >= 0 ? "compiled at " + regionPlace(region.site_file, region.site_line)
                                         : "frame code at " + regionPlace(region.site_file, region.site_line);
  if (!region.call_file.empty()) where += ", called at " + regionPlace(region.call_file, region.call_line);
  lines.emplace_back("where", where);
  std::string compiled = fmt::format(
      "{} (Dynamo {}, AOTAutograd {}, Inductor {}): {} frame{}, {} graph{}, {} graph "
      "break{}, {} recompile{}",
      regionTime(region.compile_s), regionTime(region.dynamo_s), regionTime(region.aot_s),
      regionTime(region.inductor_s), region.frames.size(), region.frames.size() == 1 ? "" : "s", region.graphs,
      region.graphs == 1 ? "" : "s", region.graph_breaks, region.graph_breaks == 1 ? "" : "s", region.recompiles,
      region.recompiles == 1 ? "" : "s");
  if (!region.recompile_causes.empty()) compiled += " (" + regionCausesText(region) + ")";
  lines.emplace_back("compile", compiled);
  if (region.calls >= 0) {
    std::string runs =
        fmt::format("{} call{} ({} compiling)", region.calls, region.calls == 1 ? "" : "s", region.compile_calls);
    if (region.wall_per_call_s >= 0) {
      runs += fmt::format(": {} wall", regionTime(region.wall_per_call_s));
      if (region.gpu_per_call_s >= 0) runs += fmt::format(", {} GPU", regionTime(region.gpu_per_call_s));
      runs += region.steady_calls > 0 ? fmt::format(" per call (its {} steady-state calls)", region.steady_calls)
                                      : std::string(" per call");
    }
    if (region.cpu_calls > 0) {  // beside the wall time of the same calls, which one thread's CPU time cannot exceed
      runs += fmt::format("; CPU {} per call", regionTime(region.cpu_per_call_s));
      if (region.cpu_wall_per_call_s >= 0) runs += fmt::format(" of {} wall", regionTime(region.cpu_wall_per_call_s));
      runs +=
          fmt::format(" on the {} call{} whose CPU time was read", region.cpu_calls, region.cpu_calls == 1 ? "" : "s");
    }
    if (region.steady_share >= 0)
      runs += fmt::format("; {:.1f} % of the steady-state steps", region.steady_share * 100);
    lines.emplace_back("runs", runs);
  } else {
    lines.emplace_back("runs", "not timed");
  }
  for (const auto& reason : region.eager) lines.emplace_back("eager", reason);
  if (!region.cudagraphs.empty()) lines.emplace_back("CUDA graphs", region.cudagraphs);
  if (region.eager_wall_per_call_s >= 0) {
    std::string versus = fmt::format("{} per call eagerly", regionTime(region.eager_wall_per_call_s));
    if (region.speedup > 0) versus += fmt::format(": {:.2f}x", region.speedup);
    versus += region.payoff_calls >= 0 ? ", compile time " + regionPayoffText(region)
                                       : ", never pays off (not faster compiled)";
    lines.emplace_back("vs eager", versus);
  }
  return lines;
}

std::string regionsSummaryLine(const RegionTable& table) {
  std::string line = fmt::format("{} region{}; the run compiled for {} ({} in the rows)", table.regions.size(),
                                 table.regions.size() == 1 ? "" : "s", regionTime(table.compile_s),
                                 regionTime(table.regions_compile_s));
  line += table.steady_steps > 0 ? fmt::format("; {} steps, {} steady-state, median {}", table.steps,
                                               table.steady_steps, regionTime(table.steady_step_s))
                                 : fmt::format("; {} steps, none steady-state", table.steps);
  return line;
}

std::string regionsVerdict(const RegionTable& table) {
  if (!table.compared) return "";
  std::string text =
      fmt::format("Against {}: the compiled regions {} over this run's calls, compiling cost {}: ", table.against,
                  regionsSavedText(table.saved_s), regionTime(table.compile_s));
  text += table.pays() ? "compilation pays at this run length." : "compilation does not pay at this run length.";
  if (table.eager_steady_step_s >= 0) {
    text += fmt::format(" Steady-state step {} compiled, {} eager.", regionTime(table.steady_step_s),
                        regionTime(table.eager_steady_step_s));
  }
  return text;
}

std::string regionsText(const RegionTable& table) {
  std::string out = fmt::format("Compiled regions of {}\n{}\n", table.path, regionsSummaryLine(table));
  for (std::size_t i = 0; i < table.regions.size(); ++i) {
    const Region& region = table.regions[i];
    out += fmt::format("\n{}. {}\n", i + 1, region.name);
    for (const auto& [label, text] : regionLines(region)) out += fmt::format("   {:<13}{}\n", label, text);
  }
  if (const auto line = regionsVerdict(table); !line.empty()) out += "\n" + line + "\n";
  for (const auto& note : table.notes) out += "note: " + note + "\n";
  return out;
}

std::string regionsMarkdown(const RegionTable& table) {
  std::string out = fmt::format("# Compiled regions of `{}`\n\n{}\n\n", report::escapeMarkdown(table.path),
                                report::escapeMarkdown(regionsSummaryLine(table)));
  out +=
      "| # | region | where | compile | runs | eager | CUDA graphs | vs eager |\n|---|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < table.regions.size(); ++i) {
    std::map<std::string, std::string> cells;
    for (const auto& [label, text] : regionLines(table.regions[i])) {
      auto& cell = cells[label];
      cell += (cell.empty() ? "" : "; ") + report::escapeMarkdown(text);
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", i + 1,
                       report::escapeMarkdown(table.regions[i].name), cells["where"], cells["compile"], cells["runs"],
                       cells["eager"], cells["CUDA graphs"], cells["vs eager"]);
  }
  if (const auto line = regionsVerdict(table); !line.empty()) out += "\n" + report::escapeMarkdown(line) + "\n";
  for (const auto& note : table.notes) out += "\n> " + report::escapeMarkdown(note) + "\n";
  return out;
}

std::string regionsHtml(const RegionTable& table) {
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
      "<title>Compiled regions</title><style>"
      "body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
      "padding:4px;vertical-align:top;text-align:left}</style></head><body>\n";
  out += fmt::format(
      "<h1>Compiled regions of {}</h1>\n<p>{}</p>\n<table>\n<tr><th>#</th><th>region</th><th>where</th>"
      "<th>compile</th><th>runs</th><th>eager</th><th>CUDA graphs</th><th>vs eager</th></tr>\n",
      report::escapeXml(table.path), report::escapeXml(regionsSummaryLine(table)));
  for (std::size_t i = 0; i < table.regions.size(); ++i) {
    std::map<std::string, std::string> cells;
    for (const auto& [label, text] : regionLines(table.regions[i])) {
      auto& cell = cells[label];
      cell += (cell.empty() ? "" : "<br>") + report::escapeXml(text);
    }
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "</tr>\n",
        i + 1, report::escapeXml(table.regions[i].name), cells["where"], cells["compile"], cells["runs"],
        cells["eager"], cells["CUDA graphs"], cells["vs eager"]);
  }
  out += "</table>\n";
  if (const auto line = regionsVerdict(table); !line.empty()) out += "<p>" + report::escapeXml(line) + "</p>\n";
  for (const auto& note : table.notes) out += "<p>note: " + report::escapeXml(note) + "</p>\n";
  return out + "</body></html>\n";
}

nlohmann::json regionsOptionalNumber(double value) {
  return value < 0 ? nlohmann::json(nullptr) : nlohmann::json(value);
}

std::string regionsJson(const RegionTable& table) {
  nlohmann::json regions = nlohmann::json::array();
  for (const auto& region : table.regions) {
    nlohmann::json causes = nlohmann::json::object();
    for (const auto& [cause, count] : region.recompile_causes) causes[cause] = count;
    regions.push_back({
        {"region", region.region >= 0 ? nlohmann::json(region.region) : nlohmann::json(nullptr)},
        {"name", report::sanitizeUtf8(region.name)},
        {"site", {{"file", report::sanitizeUtf8(region.site_file)}, {"line", region.site_line}}},
        {"call", {{"file", report::sanitizeUtf8(region.call_file)}, {"line", region.call_line}}},
        {"frames", region.frames},
        {"graphs", region.graphs},
        {"graph_breaks", region.graph_breaks},
        {"recompiles", region.recompiles},
        {"recompile_causes", causes},
        {"compile_seconds", region.compile_s},
        {"compile_stages_seconds",
         {{"dynamo", region.dynamo_s}, {"aot_autograd", region.aot_s}, {"inductor", region.inductor_s}}},
        {"calls", region.calls >= 0 ? nlohmann::json(region.calls) : nlohmann::json(nullptr)},
        {"compile_calls", region.compile_calls},
        {"steady_calls", region.calls >= 0 ? nlohmann::json(region.steady_calls) : nlohmann::json(nullptr)},
        {"run_wall_seconds", region.run_wall_s},
        {"run_cpu_seconds", region.run_cpu_s},
        {"wall_per_call_seconds", regionsOptionalNumber(region.wall_per_call_s)},
        {"cpu_calls", region.cpu_calls},
        {"cpu_per_call_seconds", regionsOptionalNumber(region.cpu_per_call_s)},
        {"cpu_wall_per_call_seconds", regionsOptionalNumber(region.cpu_wall_per_call_s)},
        {"gpu_per_call_seconds", regionsOptionalNumber(region.gpu_per_call_s)},
        {"steady_step_share", regionsOptionalNumber(region.steady_share)},
        {"eager", region.eager},
        {"cudagraphs", region.cudagraphs.empty() ? nlohmann::json(nullptr) : nlohmann::json(region.cudagraphs)},
        {"eager_calls", region.eager_calls >= 0 ? nlohmann::json(region.eager_calls) : nlohmann::json(nullptr)},
        {"eager_wall_per_call_seconds", regionsOptionalNumber(region.eager_wall_per_call_s)},
        {"speedup", regionsOptionalNumber(region.speedup)},
        {"payoff_calls", regionsOptionalNumber(region.payoff_calls)},
        {"saved_seconds", region.eager_wall_per_call_s >= 0 ? nlohmann::json(region.saved_s) : nlohmann::json(nullptr)},
    });
  }
  nlohmann::json out = {
      {"schema", kRegionsJsonSchema},
      {"path", report::sanitizeUtf8(table.path)},
      {"against",
       table.against.empty() ? nlohmann::json(nullptr) : nlohmann::json(report::sanitizeUtf8(table.against))},
      {"compile_seconds", table.compile_s},
      {"regions_compile_seconds", table.regions_compile_s},
      {"steps", table.steps},
      {"steady_steps", table.steady_steps},
      {"steady_step_median_seconds", table.steady_step_s},
      {"steady_steps_seconds", table.steady_total_s},
      {"eager_steady_step_median_seconds", regionsOptionalNumber(table.eager_steady_step_s)},
      {"saved_seconds", table.compared ? nlohmann::json(table.saved_s) : nlohmann::json(nullptr)},
      {"pays", table.compared ? nlohmann::json(table.pays()) : nlohmann::json(nullptr)},
      {"timed_per_call", table.compiled_run_measured},
      {"notes", table.notes},
      {"regions", regions},
  };
  return base::dumpJson(out, 1) + "\n";
}

}  // namespace

std::string renderRegions(const RegionTable& table, Format format, const RenderOptions& options) {
  if (format == Format::kJson) return regionsJson(table);
  RegionTable readable = table;  // the reports people read show paths under the current directory relative to it
  if (!options.absolute_paths && !options.current_directory.empty()) {
    const auto relative = [&](std::string& path) { path = pathsRelativeTo(path, options.current_directory); };
    relative(readable.path);
    relative(readable.against);
    for (auto& note : readable.notes) relative(note);
    for (auto& region : readable.regions) {
      relative(region.site_file);
      relative(region.call_file);
      for (auto& reason : region.eager) relative(reason);
    }
  }
  switch (format) {
    case Format::kMarkdown: return regionsMarkdown(readable);
    case Format::kHtml: return regionsHtml(readable);
    default: return regionsText(readable);
  }
}

}  // namespace torchscope::analyzer
