// compile/time (compilation against the run it served) and compile/not-compiled (eager jobs torch.compile would fuse).
#include <fmt/format.h>

#include <numeric>

#include "../Rules.h"
#include "torchscope/analyzer/FixIds.h"

namespace torchscope::analyzer {

namespace {

constexpr double kCompileShare = 0.1;          // of the run's duration
constexpr double kMinimumCompileSeconds = 1;   // shorter compiles are not worth caching advice
constexpr double kSmallOpSeconds = static_cast<double>(Facts::kSmallOpNanos) / 1e9;
constexpr std::int64_t kOpsPerStep = 100;
constexpr std::int64_t kOpsWithoutSteps = 1000;
constexpr double kSmallOpShare = 0.5;
constexpr double kExpectedSpeedup = 0.2;       // low end of published torch.compile gains (21 % at fp32)

Result<void> compileTime(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  const double share = facts.fraction(facts.compile_seconds);
  if (share < kCompileShare || facts.compile_seconds < kMinimumCompileSeconds) return {};
  std::int64_t hits = 0;
  std::int64_t misses = 0;
  for (const auto& compile : facts.compiles) {
    hits += compile.cache_hit == 1 ? 1 : 0;
    misses += compile.cache_hit == 0 ? 1 : 0;
  }
  const double cacheable = hits + misses > 0 ? static_cast<double>(misses) / static_cast<double>(hits + misses) : 1.0;
  const double steps_equivalent =
      facts.steady_step_median_s > 0 ? facts.compile_seconds / facts.steady_step_median_s : 0;
  Finding finding = makeFinding(
      "compile/time", share >= 0.3 ? "warning" : "info",
      fmt::format("Compilation took {} of the run ({})", formatPercent(share), formatSeconds(facts.compile_seconds)),
      fmt::format("torch.compile spent {} in {} compilations{}. {} of them missed the FX graph cache. Keep the "
                  "compiler caches between runs so that the next run starts warm.",
                  formatSeconds(facts.compile_seconds), facts.compiles.size(),
                  steps_equivalent > 0 ? fmt::format(", as long as {:.0f} steady-state steps", steps_equivalent) : "",
                  hits + misses > 0 ? std::to_string(misses) : std::string("all")),
      {fix::kCacheCompile, "keep TORCHINDUCTOR_CACHE_DIR on persistent storage, or save and load the compile "
                           "cache artifacts (torch.compiler.save_cache_artifacts)"});
  finding.count = static_cast<std::int64_t>(facts.compiles.size());
  setImpact(finding, facts, facts.compile_seconds * cacheable);
  setEvidence(finding, {{"compile_seconds", facts.compile_seconds}, {"compiles", facts.compiles.size()},
                        {"cache_hits", hits}, {"cache_misses", misses},
                        {"steady_step_median_seconds", facts.steady_step_median_s},
                        {"steps_equivalent", steps_equivalent}});
  out.push_back(std::move(finding));
  return {};
}

Result<void> notCompiled(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  if (facts.compiled) return {};
  const std::int64_t ops = facts.aten_ops;
  const std::int64_t small_ops = facts.small_aten_ops;
  const std::int64_t steps = facts.stepCount();
  const bool many = steps > 0 ? ops / steps >= kOpsPerStep : ops >= kOpsWithoutSteps;
  const double small_share = ops > 0 ? static_cast<double>(small_ops) / static_cast<double>(ops) : 0;
  if (!many || small_share < kSmallOpShare) return {};
  const double steady_s = facts.steady_step_seconds.empty()
                              ? facts.duration_s
                              : std::accumulate(facts.steady_step_seconds.begin(), facts.steady_step_seconds.end(), 0.0);
  Finding finding = makeFinding(
      "compile/not-compiled", "warning", "Eager job with many small ops: torch.compile would fuse them",
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

Result<void> compileRules(const Context& context, std::vector<Finding>& out) {
  if (auto done = compileTime(context, out); !done) return done;
  return notCompiled(context, out);
}

}  // namespace torchscope::analyzer
