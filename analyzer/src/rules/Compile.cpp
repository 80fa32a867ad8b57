// compile/time (compilation against the run it served) and compile/not-compiled (eager jobs torch.compile would fuse).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "../Locations.h"
#include "../Rules.h"
#include "NotCompiled.h"
#include "torchscope/analyzer/FixIds.h"
#include "torchscope/base/Saturating.h"

namespace torchscope::analyzer {

namespace {

constexpr double kCompileShare = 0.1;          // of the run's duration
constexpr double kMinimumCompileSeconds = 1;   // shorter compiles are not worth caching advice
constexpr double kSmallOpSeconds = static_cast<double>(Facts::kSmallOpNanos) / 1e9;
constexpr std::int64_t kOpsPerStep = 100;
constexpr std::int64_t kOpsWithoutSteps = 1000;
constexpr double kSmallOpShare = 0.5;
constexpr double kExpectedSpeedup = 0.2;       // low end of published torch.compile gains (21 % at fp32)

struct CacheOutcome {
  std::int64_t hits = 0;
  std::int64_t misses = 0;
  [[nodiscard]] bool known() const { return hits + misses > 0; }
};

CacheOutcome cacheOutcome(const std::vector<store::Compile>& compiles) {
  CacheOutcome outcome;
  for (const auto& compile : compiles) {
    outcome.hits += compile.cache_hit == 1 ? 1 : 0;
    outcome.misses += compile.cache_hit == 0 ? 1 : 0;
  }
  return outcome;
}

// What the recorded cache lookups say, and whether a persistent cache can shorten the next run.
std::pair<std::string, FixProposal> cacheAdvice(const CacheOutcome& cache) {
  const FixProposal keep_cache{
      fix::kCacheCompile,
      "keep TORCHINDUCTOR_CACHE_DIR on persistent storage, or save and load the compile cache artifacts "
      "(torch.compiler.save_cache_artifacts): the next run then loads the compiled graphs instead of compiling them"};
  if (!cache.known()) {
    return {"The run recorded no FX graph cache lookups, so whether the cache served any of them is unknown. A "
            "persistent compiler cache helps the next run, not this one.",
            keep_cache};
  }
  if (cache.misses == 0) {
    return {fmt::format("All {} recorded FX graph cache lookups hit already; what is left is tracing and loading the "
                        "cached graphs, which the FX graph cache does not save.", cache.hits),
            {"", "fewer recompilations and graph breaks shorten tracing: see the recompile/* and graph-break/* findings"}};
  }
  return {fmt::format("{} of the {} recorded FX graph cache lookups missed. A persistent compiler cache helps the next "
                      "run, not this one.", cache.misses, cache.hits + cache.misses),
          keep_cache};
}

struct FrameCompileTime {
  std::string file;
  std::int64_t line = -1;
  std::string function;
  double seconds = 0;
  std::int64_t compiles = 0;
};

// Compile time per compiled frame (code object), most expensive first.
std::vector<FrameCompileTime> compileTimeByFrame(const std::vector<store::Compile>& compiles) {
  std::map<std::pair<std::string, std::int64_t>, FrameCompileTime> frames;
  for (const auto& compile : compiles) {
    if (compile.co_filename.empty()) continue;
    FrameCompileTime& frame = frames[{compile.co_filename, compile.co_firstlineno}];
    frame.file = compile.co_filename;
    frame.line = compile.co_firstlineno;
    frame.function = compile.co_name;
    frame.seconds += toSeconds(static_cast<double>(base::spanNanos(compile.start_ns, compile.end_ns)));
    ++frame.compiles;
  }
  std::vector<FrameCompileTime> ranked;
  for (auto& [key, frame] : frames) ranked.push_back(std::move(frame));
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  return ranked;
}

// When no compiled frame is the user's (a compiled library module, such as a DistributedDataParallel wrapper), the
// user's call into the compiled region, from the stack of a graph break in the costliest frame that recorded one.
Result<Location> regionCallOfLibraryFrames(const Context& context, const std::vector<FrameCompileTime>& frames) {
  if (context.facts.count("graph_breaks") == 0) return Location{};
  auto breaks = context.reader.load<store::GraphBreak>();
  if (!breaks) return breaks.error();
  for (const auto& frame : frames) {
    for (const auto& compile : context.facts.compiles) {
      if (compile.co_filename != frame.file || compile.co_firstlineno != frame.line) continue;
      for (const auto& row : *breaks) {
        if (row.pid != compile.pid || row.frame_id != compile.frame_id) continue;
        Location call = regionCallLocation(store::parseStack(row.stack), context.code);
        if (call.known()) return call;
      }
    }
  }
  return Location{};
}

// The torch.compile call of the costliest frame that recompiled with one recorded (compiles keep no call site), and
// the user's call into that region.
struct RecordedEntry {
  Location entry;
  Location call;
};

RecordedEntry entryOfFrames(const Context& context, const std::vector<FrameCompileTime>& frames) {
  for (const auto& frame : frames) {
    for (const auto& recompile : context.facts.recompiles) {
      if (recompile.co_filename == frame.file && recompile.co_firstlineno == frame.line && !recompile.entry_file.empty()) {
        return {{recompile.entry_file, recompile.entry_line, ""},
                regionCallLocation(store::parseStack(recompile.stack), context.code)};
      }
    }
  }
  return {};
}

// "`forward` (model.py:10)", or for a Dynamo resume function "the rest of `forward` after its graph break at
// model.py:41", or for torch's wrapper "the code compiled at train.py:36".
std::string frameText(const FrameCompileTime& frame, const Location& entry) {
  const std::string function = displayFunction(frame.function);
  if (function != frame.function) {
    return fmt::format("the rest of `{}` after its graph break at {}", function, formatLocation(frame.file, frame.line));
  }
  return compiledFrameText({frame.file, frame.line, function}, entry);
}

std::string compilations(std::size_t count) {
  return count == 1 ? "1 compilation" : fmt::format("{} compilations", count);
}

Result<void> compileTime(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  const auto per_process = compileSecondsPerProcess(facts.compiles);
  const double compile_s = facts.compile_seconds;
  const double share = facts.fraction(compile_s);
  if (share < kCompileShare || compile_s < kMinimumCompileSeconds) return {};
  const CacheOutcome cache = cacheOutcome(facts.compiles);
  auto [cache_text, fix] = cacheAdvice(cache);
  if (compiledNoGraph(facts.compiles)) {
    // Nothing was compiled, so a compile cache has nothing to keep: the time is Dynamo's tracing.
    cache_text = "None of the compilations produced a graph: torch.compile traced the code and ran all of it eagerly, "
                 "so a compile cache would save nothing; the graph-break findings say what stopped the capture.";
    fix = {"", "make the compiled code capturable (the graph-break findings name what stops it), or stop compiling it"};
  }
  const double steps_equivalent = facts.steady_step_median_s > 0 ? compile_s / facts.steady_step_median_s : 0;
  double summed_s = 0;
  for (const auto& compile : facts.compiles) {
    summed_s += toSeconds(static_cast<double>(base::spanNanos(compile.start_ns, compile.end_ns)));
  }
  const std::string steps =
      steps_equivalent > 0 ? fmt::format(", as long as {:.0f} steady-state steps", steps_equivalent) : "";
  const std::string spent =
      per_process.size() > 1
          ? fmt::format("torch.compile ran {} compilations in {} processes; the slowest process spent {} of wall time "
                        "compiling{} (processes compile side by side, so their times are not added up).",
                        facts.compiles.size(), per_process.size(), formatSeconds(compile_s), steps)
          : fmt::format("torch.compile spent {} of wall time in {}{}.", formatSeconds(compile_s),
                        compilations(facts.compiles.size()), steps);
  // The finding sits at the user's function that cost the most compilation; library frames stay evidence.
  const auto frames = compileTimeByFrame(facts.compiles);
  const auto costliest_user = std::find_if(frames.begin(), frames.end(),
                                           [&](const auto& frame) { return context.code.isUserFile(frame.file); });
  const std::string where =
      costliest_user == frames.end()
          ? ""
          : fmt::format(" Your code that cost the most is {}: {} in {}.", frameText(*costliest_user, {}),
                        formatSeconds(costliest_user->seconds),
                        compilations(static_cast<std::size_t>(costliest_user->compiles)));
  // Without a compiled frame of the user's, the finding points at the user's call into the region, else at the
  // torch.compile call that compiled it.
  Location region_call;
  Location entry;
  if (costliest_user == frames.end()) {
    auto call = regionCallOfLibraryFrames(context, frames);
    if (!call) return call.error();
    region_call = std::move(*call);
    if (!region_call.known()) {
      const RecordedEntry recorded = entryOfFrames(context, frames);
      entry = recorded.entry;
      // A framework's own torch.compile call (accelerate, a Trainer) is no line to change: the user's call is.
      if (entry.known() && !context.code.isUserFile(entry.file)) region_call = recorded.call;
    }
  }
  std::string entered;
  if (!frames.empty() && isCompileWrapper({frames.front().file, frames.front().line, frames.front().function}) &&
      entry.known()) {
    entered = fmt::format(" The costliest is {}: {} in {}{}.", frameText(frames.front(), entry),
                          formatSeconds(frames.front().seconds),
                          compilations(static_cast<std::size_t>(frames.front().compiles)),
                          region_call.known() ? ", called from your line " + describe(region_call) : "");
  } else if (!frames.empty() && (region_call.known() || entry.known())) {
    entered = fmt::format(" None of the compiled frames is your code: the costliest, {}, {}.",
                          frameText(frames.front(), entry),
                          region_call.known() ? "is compiled from your call at " + describe(region_call)
                                              : "comes from the torch.compile call at " + describe(entry));
  }
  Finding finding =
      makeFinding("compile/time", share >= 0.3 ? Severity::kWarning : Severity::kInfo,
                  fmt::format("Compilation took {} of the run ({})", formatPercent(share), formatSeconds(compile_s)),
                  fmt::format("{}{}{} {}", spent, where, entered, cache_text), fix);
  finding.count = static_cast<std::int64_t>(facts.compiles.size());
  if (costliest_user != frames.end()) {
    finding.file = costliest_user->file;
    finding.line = costliest_user->line;
    finding.function = displayFunction(costliest_user->function);
  } else if (region_call.known() || entry.known()) {
    const Location& user = region_call.known() ? region_call : entry;
    finding.file = user.file;
    finding.line = user.line;
    finding.function = user.function;
  }
  constexpr std::size_t kFramesInEvidence = 5;
  nlohmann::json frames_json = nlohmann::json::array();
  for (std::size_t i = 0; i < std::min(frames.size(), kFramesInEvidence); ++i) {
    frames_json.push_back({{"file", frames[i].file}, {"line", frames[i].line}, {"function", frames[i].function},
                           {"compile_seconds_summed", frames[i].seconds}, {"compiles", frames[i].compiles},
                           {"library", !context.code.isUserFile(frames[i].file)}});
  }
  // The impact is the compile time the title states; how much of it a cache could save, the message says.
  setImpact(finding, facts, compile_s);
  nlohmann::json per_process_json = nlohmann::json::object();
  for (const auto& [pid, seconds] : per_process) per_process_json[std::to_string(pid)] = seconds;
  setEvidence(finding, {{"compile_seconds", compile_s}, {"compile_seconds_summed", summed_s},
                        {"compile_seconds_per_process", per_process_json}, {"compiles", facts.compiles.size()},
                        {"cache_lookups_recorded", cache.known()}, {"cache_hits", cache.hits},
                        {"cache_misses", cache.misses}, {"steady_step_median_seconds", facts.steady_step_median_s},
                        {"steps_equivalent", steps_equivalent}, {"costliest_frames", frames_json}});
  out.push_back(std::move(finding));
  return {};
}

Result<void> notCompiled(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  if (facts.compiled) return {};
  if (facts.aten_ops == 0) return notCompiledFromCensus(context, out);  // no profiler op records: the census
  const std::int64_t ops = facts.aten_ops;
  const std::int64_t small_ops = facts.small_aten_ops;
  const std::int64_t steps = facts.stepCount();
  const bool many = steps > 0 ? ops / steps >= kOpsPerStep : ops >= kOpsWithoutSteps;
  const double small_share = ops > 0 ? static_cast<double>(small_ops) / static_cast<double>(ops) : 0;
  if (!many || small_share < kSmallOpShare) return {};
  const double steady_s = facts.steady_step_seconds.empty() ? facts.duration_s : facts.steady_step_total_s;
  Finding finding = makeFinding(
      "compile/not-compiled", Severity::kWarning, "Eager job with many small ops: torch.compile would fuse them",
      fmt::format("The job ran {} aten ops{} without torch.compile; {} of them took under {}. Each small op pays "
                  "Python and dispatch overhead and a kernel launch; torch.compile fuses them into fewer kernels.",
                  ops, steps > 0 ? fmt::format(" ({} per step)", ops / steps) : "", formatPercent(small_share),
                  formatSeconds(kSmallOpSeconds)),
      {fix::kTorchCompile, "model = torch.compile(model)"});
  finding.count = ops;
  setImpact(finding, facts, steady_s * kExpectedSpeedup * small_share);
  setEvidence(finding, {{"aten_ops", ops}, {"small_ops", small_ops}, {"small_op_share", small_share},
                        {"steps", steps}, {"small_op_threshold_seconds", kSmallOpSeconds}});
  out.push_back(std::move(finding));
  return {};
}

}  // namespace

std::map<std::int64_t, double> compileSecondsPerProcess(const std::vector<store::Compile>& compiles) {
  std::map<std::int64_t, std::vector<std::pair<base::Nanos, base::Nanos>>> intervals;
  for (const auto& compile : compiles) {
    if (compile.end_ns > compile.start_ns) intervals[compile.pid].emplace_back(compile.start_ns, compile.end_ns);
  }
  std::map<std::int64_t, double> seconds;
  for (auto& [pid, spans] : intervals) {
    std::sort(spans.begin(), spans.end());
    base::Nanos covered = 0;
    base::Nanos until = spans.front().first;
    for (const auto& [start, end] : spans) {
      covered = base::saturatingAdd(covered, base::spanNanos(std::max(start, until), end));
      until = std::max(until, end);
    }
    seconds[pid] = toSeconds(static_cast<double>(covered));
  }
  return seconds;
}

double compileWallSeconds(const std::vector<store::Compile>& compiles) {
  double most = 0;
  for (const auto& [pid, seconds] : compileSecondsPerProcess(compiles)) most = std::max(most, seconds);
  return most;
}

bool compiledNoGraph(const std::vector<store::Compile>& compiles) {
  return std::any_of(compiles.begin(), compiles.end(), [](const auto& c) { return c.graph_count == 0; }) &&
         std::none_of(compiles.begin(), compiles.end(), [](const auto& c) { return c.graph_count > 0; });
}

Result<void> compileRules(const Context& context, std::vector<Finding>& out) {
  if (auto done = compileTime(context, out); !done) return done;
  return notCompiled(context, out);
}

}  // namespace torchscope::analyzer
