#include "torchscope/gui/RankTable.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <thread>

#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/RankFacts.h"
#include "torchscope/base/JsonText.h"
#include "torchscope/base/Statistics.h"
#include "torchscope/gui/Text.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::gui {

namespace fs = std::filesystem;
using nlohmann::json;

bool wantsRunFolderView(const std::vector<std::string>& arguments, std::size_t stores) {
  std::error_code error;
  return arguments.size() == 1 && fs::is_directory(arguments.front(), error) && stores > kRunFolderViewAboveRanks;
}

namespace {

struct MappedStore {
  std::string document;  // the rank facts, as mapStore() writes them
  bool from_file = false;
};

// STORE.facts.json when it was written after the store, by this release, with the options mapped here (none): what
// `advise --rank-facts STORE -o STORE.facts.json` left beside it. Anything else is mapped again.
std::string currentFactsFile(const std::string& store) {
  const std::string file = store + std::string(analyzer::kRankFactsSuffix);
  std::error_code error;
  const auto facts_time = fs::last_write_time(file, error);
  if (error) return {};
  const auto store_time = fs::last_write_time(store, error);
  if (error || facts_time < store_time) return {};
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::string document = std::move(text).str();
  const json parsed = base::parseJson(document);
  if (!parsed.is_object() || parsed.value("format", "") != analyzer::kRankFactsFormat ||
      parsed.value("version", std::int64_t{-1}) != analyzer::kRankFactsVersion ||
      parsed.value("torchscope", "") != analyzer::releaseVersion() || parsed.contains("error")) {
    return {};
  }
  const json options = parsed.value("options", json::object());
  if (!options.value("user_code", json::array()).empty() || options.value("timeline_buckets", 0) != 0) return {};
  return document;
}

MappedStore mapOne(const std::string& store) {
  if (std::string document = currentFactsFile(store); !document.empty()) return {std::move(document), true};
  auto mapped = analyzer::mapStore(store);
  if (mapped) return {std::move(*mapped), false};
  return {analyzer::unanalysedFacts(store, "", mapped.error().message), false};
}

// The stores are independent files: mapped side by side, one connection per thread, as the analysis does.
std::vector<MappedStore> mapAll(const std::vector<std::string>& stores, const std::function<bool()>& stale) {
  std::vector<MappedStore> mapped(stores.size());
  const std::size_t workers = std::min<std::size_t>(stores.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < stores.size() && !(stale && stale()); i = next++) mapped[i] = mapOne(stores[i]);
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < workers; ++t) threads.emplace_back(work);
  work();
  for (auto& thread : threads) thread.join();
  return mapped;
}

std::string fileName(const std::string& path) { return fs::path(path).filename().string(); }

std::int64_t peakMemory(const analyzer::MemorySummary& memory, bool& gpu) {
  std::int64_t peak = -1;
  for (const auto& device : memory.devices) peak = std::max(peak, device.peak_allocated_bytes);
  gpu = peak >= 0;
  return gpu ? peak : memory.peak_rss_bytes;
}

void fillFromAnalysis(RankRow& row, const analyzer::Analysis& analysis) {
  const std::string name = fileName(row.path);
  for (const auto& run : analysis.runs) {
    if (fileName(run.path) != name) continue;
    if (run.rank >= 0) row.rank = run.rank;
    row.steps = static_cast<std::int64_t>(run.step_seconds.size());
    const auto& steady = run.steady_step_seconds;
    if (!steady.empty()) row.mean_step_s = std::accumulate(steady.begin(), steady.end(), 0.0) / steady.size();
    row.median_step_s = run.steady_step_median_s;
    row.graph_breaks = run.graph_breaks;
    row.recompiles = run.recompiles;
    row.peak_memory_bytes = peakMemory(run.memory, row.peak_memory_gpu);
  }
  for (const auto& rank : analysis.ranks.ranks) {
    if (fileName(rank.path) != name) continue;
    row.rank = rank.rank;
    row.exposed_collective_s = rank.exposed_collective_s;
  }
  for (const auto& straggler : analysis.ranks.stragglers) row.straggler |= row.rank >= 0 && straggler.rank == row.rank;
}

void fillDistanceFromMedian(std::vector<RankRow>& rows) {
  std::vector<double> medians;
  for (const auto& row : rows) {
    if (row.analysed() && row.median_step_s > 0) medians.push_back(row.median_step_s);
  }
  if (medians.empty()) return;
  const double middle = base::median(medians);
  if (middle <= 0) return;
  for (auto& row : rows) {
    if (row.analysed() && row.median_step_s > 0) row.from_median_fraction = (row.median_step_s - middle) / middle;
  }
}

std::string seconds(double value) { return formatDuration(static_cast<base::Nanos>(std::llround(value * 1e9))); }

}  // namespace

Result<RankTable> buildRankTable(const std::vector<std::string>& stores, const std::function<bool()>& stale) {
  const auto mapped = mapAll(stores, stale);
  if (stale && stale()) return makeError(ErrorCode::kInvalidArgument, "cancelled");
  std::vector<std::string> documents;
  for (const auto& store : mapped) documents.push_back(store.document);
  auto analysis = analyzer::mergeFacts(documents, stores);
  if (!analysis) return analysis.error();

  RankTable table;
  for (std::size_t i = 0; i < stores.size(); ++i) {
    RankRow row;
    row.path = stores[i];
    row.rank = store::rankInStoreName(fileName(row.path));
    row.from_facts_file = mapped[i].from_file;
    const json document = base::parseJson(mapped[i].document);
    if (const auto error = document.find("error"); error != document.end() && error->is_string()) {
      row.error = error->get<std::string>();
    } else {
      if (const auto findings = document.find("findings"); findings != document.end() && findings->is_array()) {
        row.findings = static_cast<std::int64_t>(findings->size());
      }
      fillFromAnalysis(row, *analysis);
    }
    table.rows.push_back(std::move(row));
  }
  fillDistanceFromMedian(table.rows);
  table.findings = std::move(analysis->findings);
  table.notes = analysis->ranks.partial_reasons;
  return table;
}

std::string rankColumnTitle(RankColumn column) {
  switch (column) {
    case RankColumn::kRank: return "Rank";
    case RankColumn::kSteps: return "Steps";
    case RankColumn::kMeanStep: return "Mean step";
    case RankColumn::kMedianStep: return "Median step";
    case RankColumn::kFromMedian: return "vs median rank";
    case RankColumn::kExposedComm: return "Collective wait";
    case RankColumn::kRecompiles: return "Recompiles";
    case RankColumn::kGraphBreaks: return "Graph breaks";
    case RankColumn::kPeakMemory: return "Peak memory";
    case RankColumn::kFindings: return "Findings";
    case RankColumn::kStore: return "Store";
    case RankColumn::kCount: break;
  }
  return {};
}

std::string rankCell(const RankRow& row, RankColumn column) {
  if (column == RankColumn::kRank) return row.rank >= 0 ? std::to_string(row.rank) : "-";
  if (column == RankColumn::kStore)
    return row.analysed() ? fileName(row.path) : fileName(row.path) + " — not analysed: " + row.error;
  if (!row.analysed()) return "-";
  switch (column) {
    case RankColumn::kSteps: return std::to_string(row.steps);
    case RankColumn::kMeanStep: return row.median_step_s > 0 ? seconds(row.mean_step_s) : "-";
    case RankColumn::kMedianStep: return row.median_step_s > 0 ? seconds(row.median_step_s) : "-";
    case RankColumn::kFromMedian:
      if (row.median_step_s <= 0) return "-";
      return fmt::format("{:+.1f}%{}", row.from_median_fraction * 100, row.straggler ? " straggler" : "");
    case RankColumn::kExposedComm: return seconds(row.exposed_collective_s);
    case RankColumn::kRecompiles: return std::to_string(row.recompiles);
    case RankColumn::kGraphBreaks: return std::to_string(row.graph_breaks);
    case RankColumn::kPeakMemory:
      if (row.peak_memory_bytes < 0) return "-";
      return formatBytes(row.peak_memory_bytes) + (row.peak_memory_gpu ? " GPU" : " host");
    case RankColumn::kFindings: return std::to_string(row.findings);
    default: return {};
  }
}

std::string mergedFindingLine(const analyzer::Finding& finding) {
  std::string line = fmt::format("[{}] {}", analyzer::severityName(finding.severity), finding.title);
  // Cross-rank titles often name their line already ("... at train.py:41"): said once.
  if (const std::string where = sourceLocation(finding.file, finding.line);
      !where.empty() && finding.title.find(where) == std::string::npos) {
    line += " — " + where;
  }
  const auto ranks = analyzer::ranksNamedBy(finding);
  if (!ranks.empty()) line += fmt::format(" (rank{} {})", ranks.size() > 1 ? "s" : "", fmt::join(ranks, ", "));
  return line;
}

}  // namespace torchscope::gui
