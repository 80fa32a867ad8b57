#include "torchscope/analyzer/Analyzer.h"
#include "RequestFacts.h"
#include "torchscope/analyzer/RuleTable.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "FactsJson.h"
#include "FlameGraphs.h"
#include "LineTimes.h"
#include "MemoryFacts.h"
#include "Overview.h"
#include "RankFacts.h"
#include "Rules.h"
#include "torchscope/base/JsonText.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/store/Writer.h"

namespace torchscope::analyzer {

namespace {

void rank(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return std::make_tuple(-a.impact_seconds, a.severity, a.rule, a.file, a.line) <
           std::make_tuple(-b.impact_seconds, b.severity, b.rule, b.file, b.line);
  });
}

Result<std::vector<TimelineBucket>> timeline(const store::Reader& reader, const Facts& facts, int buckets) {
  std::vector<TimelineBucket> result(static_cast<std::size_t>(buckets));
  const base::Nanos span = std::max<base::Nanos>(1, base::spanNanos(facts.begin_ns, facts.end_ns));
  const double width_s = toSeconds(static_cast<double>(span)) / buckets;
  for (int i = 0; i < buckets; ++i) result[static_cast<std::size_t>(i)].start_s = width_s * i;
  struct Series {
    std::string_view table;
    double TimelineBucket::*field;
  };
  for (const Series series : {Series{"kernels", &TimelineBucket::gpu_busy_s}, Series{"cpu_ops", &TimelineBucket::cpu_op_s},
                              Series{"syncs", &TimelineBucket::sync_s}}) {
    // SQLite turns an overflowing product into a REAL (read back clamped); total() of clamped spans cannot overflow.
    auto done = reader.query(
        fmt::format("SELECT (start_ns - ?) * ? / ? AS b, total(max(end_ns - start_ns, 0)) FROM {} GROUP BY b",
                    series.table),
        [&](const store::Row& row) {
          const std::int64_t bucket = row.integer(0);
          if (bucket >= 0 && bucket < buckets) result[static_cast<std::size_t>(bucket)].*series.field += toSeconds(row.real(1));
        },
        {facts.begin_ns, static_cast<std::int64_t>(buckets), span});
    if (!done) return done.error();
  }
  return result;
}

RunSummary summarize(const store::Reader& reader, const Facts& facts, const store::CodeRoots& code) {
  RunSummary summary;
  summary.path = reader.path();
  summary.run = facts.run;
  if (!code.user.empty()) summary.job_folder = code.user.front();
  summary.partial = facts.partial;
  summary.duration_s = facts.duration_s;
  summary.begin_ns = facts.begin_ns;
  summary.end_ns = facts.end_ns;
  // A store whose processes cannot be read still gets the rest of its summary, its process unnamed.
  (void)reader.query("SELECT name FROM processes ORDER BY start_ns LIMIT 1",
                     [&](const store::Row& row) { summary.process_name = row.text(0); });
  summary.window = captureWindowOf(reader);
  for (const auto& step : facts.steps) {
    summary.step_seconds.push_back(toSeconds(static_cast<double>(base::spanNanos(step.start_ns, step.end_ns))));
  }
  summary.steady_step_seconds = facts.steady_step_seconds;
  summary.steady_step_median_s = facts.steady_step_median_s;
  summary.requests = summarizeRequests(reader, facts);
  summary.compile_seconds = facts.compile_seconds;
  summary.compiles = static_cast<std::int64_t>(facts.compiles.size());
  summary.graph_breaks = facts.count("graph_breaks");
  summary.recompiles = facts.count("recompiles");
  summary.syncs = facts.count("syncs");
  summary.kernels = facts.count("kernels");
  if (facts.count("memory_samples") > 0) {
    // A store whose memory cannot be read still gets the rest of its summary.
    if (auto memory = collectMemoryFacts(reader)) summary.memory = summarizeMemory(*memory, firstSteadyStep(facts));
  }
  // Likewise the line table: a store whose samples cannot be read still gets the rest.
  if (auto lines = buildLineTable(reader, facts, code)) summary.lines = std::move(*lines);
  if (auto flame = buildFlameGraph(reader, facts, code, FlameOptions{})) summary.flame = std::move(*flame);
  return summary;
}

using FindingKey = std::tuple<RuleId, std::string, std::int64_t, std::string>;

// What the findings of a job of several processes are fractions of: the job's span for a finding of one process,
// and the processes' time added up for one found in several, whose impacts are added up.
struct JobTime {
  double span_s = 0;
  double processes_s = 0;
};

// Same rule at the same place in several processes' stores: one finding with the counts and impact added up,
// and the ranks that had it (`ranks[i]` is the rank of store i, -1 for none).
std::vector<Finding> mergeAcrossStores(std::vector<std::vector<Finding>> per_store,
                                       const std::vector<std::int64_t>& ranks, const JobTime& job) {
  std::map<FindingKey, Finding> merged;
  std::map<FindingKey, int> stores;
  std::map<FindingKey, std::vector<std::int64_t>> ranks_with;
  std::vector<FindingKey> order;
  for (std::size_t i = 0; i < per_store.size(); ++i) {
    for (auto& finding : per_store[i]) {
      FindingKey key{finding.rule, finding.file, finding.line, finding.function};
      auto [it, inserted] = merged.try_emplace(key, finding);
      if (inserted) {
        order.push_back(key);
      } else {
        it->second.count = base::saturatingAdd(it->second.count, finding.count);
        it->second.impact_seconds += finding.impact_seconds;
        if (finding.severity < it->second.severity) it->second.severity = finding.severity;
      }
      ++stores[key];
      if (ranks[i] >= 0) ranks_with[key].push_back(ranks[i]);
    }
  }
  const auto share = [](double seconds, double of) { return of > 0 ? std::clamp(seconds / of, 0.0, 1.0) : 0.0; };
  std::vector<Finding> result;
  for (const auto& key : order) {
    Finding finding = std::move(merged[key]);
    if (stores[key] > 1) {
      if (finding.evidence.is_object()) {
        finding.evidence["stores"] = stores[key];
        if (!ranks_with[key].empty()) finding.evidence["ranks"] = ranks_with[key];
      }
      finding.impact_fraction = share(finding.impact_seconds, job.processes_s);
    } else if (per_store.size() > 1) {
      finding.impact_fraction = share(finding.impact_seconds, job.span_s);
    }
    result.push_back(std::move(finding));
  }
  return result;
}

}  // namespace

const std::vector<RuleFamily>& ruleFamilies() {
  static const std::vector<RuleFamily> families = {
      {"recompile", recompileRules},
      {"graph-break", graphBreakRules},
      {"sync", syncRules},
      {"memcpy", memcpyRules},
      {"gpu", gpuRules},
      {"precision", precisionRules},
      {"compile", compileRules},
      {"inference", inferenceRules},
      {"memory", memoryRules},
  };
  return families;
}

const std::vector<std::string>& ruleIds() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> all;
    for (const RuleInfo& rule : ruleTable()) all.emplace_back(rule.id);
    return all;
  }();
  return ids;
}

namespace {

// What every rule of one store reads: its facts and which files are the user's.
struct StoreFacts {
  Facts facts;
  store::CodeRoots code;
};

Result<StoreFacts> collectStoreFacts(const store::Reader& reader, const AnalyzeOptions& options) {
  auto facts = collectFacts(reader);
  if (!facts) return facts.error();
  auto attributes = reader.load<store::RunAttribute>();
  if (!attributes) return attributes.error();
  StoreFacts result{std::move(*facts), store::codeRootsFrom(*attributes)};
  result.code.user.insert(result.code.user.end(), options.user_code.begin(), options.user_code.end());
  return result;
}

Result<Analysis> runRules(const Context& context, const AnalyzeOptions& options) {
  const store::Reader& reader = context.reader;
  const Facts& facts = context.facts;
  Analysis analysis;
  analysis.runs.push_back(summarize(reader, facts, context.code));
  if (facts.partial) {
    analysis.notes.push_back(fmt::format("{}: the run did not finish (crashed or killed); the analysis is partial and "
                                         "covers what was recorded", reader.path()));
  }
  if (facts.steps.empty()) {
    analysis.notes.push_back(fmt::format("{}: no training steps were recorded; per-step figures use the whole run",
                                         reader.path()));
  }
  for (const auto& family : ruleFamilies()) {
    if (auto done = family.run(context, analysis.findings); !done) {
      // A damaged file fails the analysis; anything else costs only this family's findings.
      if (done.error().code == ErrorCode::kCorrupt) return done.error();
      analysis.notes.push_back(fmt::format("{}: the {} rules could not run: {}", reader.path(), family.family,
                                           done.error().message));
    }
  }
  if (options.timeline_buckets > 0) {
    auto buckets = timeline(reader, facts, options.timeline_buckets);
    if (!buckets) return buckets.error();
    analysis.runs.back().timeline = std::move(*buckets);
    auto overview = buildOverview(context, analysis.findings);
    if (!overview) return overview.error();
    analysis.runs.back().overview = std::move(*overview);
  }
  rank(analysis.findings);
  return analysis;
}

}  // namespace

Result<Analysis> analyzeStore(const store::Reader& reader, const AnalyzeOptions& options) {
  auto store_facts = collectStoreFacts(reader, options);
  if (!store_facts) return store_facts.error();
  return runRules({reader, store_facts->facts, store_facts->code}, options);
}

Result<StoreShare> analyzeStoreShare(const std::string& path, const AnalyzeOptions& options) {
  auto reader = store::Reader::open(path);
  if (!reader) return reader.error();
  auto store_facts = collectStoreFacts(**reader, options);
  if (!store_facts) return aboutFile(path, store_facts.error());
  const Context context{**reader, store_facts->facts, store_facts->code};
  auto analysis = runRules(context, options);
  if (!analysis) return aboutFile(path, analysis.error());
  auto ranks = collectRankFacts(context, analysis->runs.front());
  if (!ranks) return aboutFile(path, ranks.error());
  auto problems = problemCounts(**reader);
  if (!problems) return aboutFile(path, problems.error());
  analysis->runs.front().problems = std::move(*problems);
  ranks->steps.clear();  // summarized: the merge reads the summary
  ranks->collectives.clear();
  return StoreShare{std::move(*analysis), std::move(*ranks)};
}

Analysis mergeStoreShares(std::vector<StoreShare> shares, std::vector<UnanalysedStore> unanalysed) {
  Analysis combined;
  std::vector<std::vector<Finding>> per_store;
  std::vector<RankFacts> rank_facts;
  std::vector<std::int64_t> store_ranks;
  JobTime job;
  for (auto& share : shares) {
    auto& analysis = share.analysis;
    store_ranks.push_back(share.ranks.summary.rank);
    for (auto& run : analysis.runs) {
      run.rank = share.ranks.summary.rank;
      job.processes_s += run.duration_s;
      combined.runs.push_back(std::move(run));
    }
    rank_facts.push_back(std::move(share.ranks));
    combined.notes.insert(combined.notes.end(), analysis.notes.begin(), analysis.notes.end());
    per_store.push_back(std::move(analysis.findings));
  }
  job.span_s = jobSpanSeconds(combined.runs);
  combined.ranks = analyzeRanks(std::move(rank_facts), std::move(unanalysed));
  combined.findings = mergeAcrossStores(std::move(per_store), store_ranks, job);
  if (!combined.ranks.empty()) {
    auto rank_findings = rankFindings(combined.ranks, combined.findings, job.span_s);
    combined.findings.insert(combined.findings.end(), rank_findings.begin(), rank_findings.end());
  }
  if (!combined.ranks.empty() || !combined.ranks.unanalysed.empty()) {
    for (const auto& reason : combined.ranks.partial_reasons) combined.notes.push_back("the run is partial: " + reason);
  }
  rank(combined.findings);
  return combined;
}

void rankFindingsByImpact(std::vector<Finding>& findings) { rank(findings); }

double jobSpanSeconds(const std::vector<RunSummary>& runs) {
  if (runs.empty()) return 0;
  const bool one_host = std::all_of(runs.begin(), runs.end(), [&](const RunSummary& run) {
    return !run.run.host.empty() && run.run.host == runs.front().run.host;
  });
  const bool anchored = std::all_of(runs.begin(), runs.end(), [](const RunSummary& run) {
    return run.run.start_wall_ns > 0 && run.run.start_ns > 0;
  });
  if (!one_host && !anchored) {  // no clock in common: the longest run is all that is known
    double longest = 0;
    for (const auto& run : runs) longest = std::max(longest, run.duration_s);
    return longest;
  }
  // CLOCK_MONOTONIC is one clock for every process of a host; across hosts each run's date is its anchor's.
  std::vector<std::pair<base::Nanos, base::Nanos>> intervals;
  for (const auto& run : runs) {
    const base::Nanos shift = one_host ? 0 : base::saturatingSub(run.run.start_wall_ns, run.run.start_ns);
    intervals.emplace_back(base::saturatingAdd(run.begin_ns, shift),
                           base::saturatingAdd(std::max(run.end_ns, run.begin_ns), shift));
  }
  return unionSeconds(std::move(intervals));
}

bool isDataLoaderWorker(const RunSummary& run) { return run.process_name == "pt_data_worker"; }

Result<void> saveFindings(const std::string& path, const std::vector<Finding>& findings) {
  {
    auto reader = store::Reader::open(path);  // refuses foreign and newer files before anything is written
    if (!reader) return reader.error();
  }
  auto writer = store::Writer::open(path, {.mode = store::OpenMode::kReplaceFindings});
  if (!writer) return makeError(writer.error().code, path + ": cannot replace the findings: " + writer.error().message);
  for (const auto& finding : findings) (*writer)->add(findingRecord(finding));
  return (*writer)->close();
}

}  // namespace torchscope::analyzer
