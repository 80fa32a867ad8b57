#include "torchscope/compiler/Effects.h"

#include <fmt/format.h>

#include <algorithm>

namespace torchscope::compiler {
namespace {

// The quantity an effect lowers (or, for kCompiles, raises); -1 when the run does not know it.
double counted(Effect effect, const RunMeasurement& run) {
  switch (effect) {
    case Effect::kFewerShapeRecompiles: return static_cast<double>(recompilesOf(run, "dynamic-shape"));
    case Effect::kFewerScalarRecompiles: return static_cast<double>(recompilesOf(run, "python-scalar"));
    case Effect::kFewerGraphBreaks: return static_cast<double>(run.graph_breaks);
    case Effect::kFewerSyncs: return static_cast<double>(run.syncs);
    case Effect::kFewerGraphBreaksOrSyncs:
      return static_cast<double>(run.graph_breaks + std::max<std::int64_t>(run.syncs, 0));
    case Effect::kCompiles: return static_cast<double>(run.compiles);
    case Effect::kLessCompileTime: return run.compile_cpu_s >= 0 ? run.compile_cpu_s : run.compile_time_s;
    case Effect::kFasterStep: return -1;
  }
  return -1;
}

std::string countText(Effect effect, double value) {
  return effect == Effect::kLessCompileTime ? fmt::format("{:.1f} s", value) : fmt::format("{:.0f}", value);
}

}  // namespace

std::string whyCannotAct(const FixRequest& fix, const RunMeasurement& profile, bool shared_compile_cache) {
  switch (fix.requirement) {
    case Requirement::kNone: break;
    case Requirement::kCompiledJob:
      if (profile.compiles == 0) return "the job compiles nothing with torch.compile";
      break;
    case Requirement::kCuda:
      if (!profile.cuda_used) return "the job does not use a CUDA device";
      break;
    case Requirement::kSharedCompileCache:
      if (!shared_compile_cache) {
        return "every run compiles into a cache of its own that holds none of the job's graphs, so a compile cache "
               "has nothing to reuse (--shared-compile-cache lets the runs share one)";
      }
      break;
  }
  const double target = counted(fix.effect, profile);
  switch (fix.effect) {
    case Effect::kFasterStep: return "";
    case Effect::kCompiles: return target > 0 ? "the job already compiles" : "";
    case Effect::kFewerSyncs:
      if (target == 0) return "the run recorded no host-device sync (on the CPU, .item() waits for no device)";
      return "";
    default:
      if (target == 0) return fmt::format("the run shows nothing for it to remove ({} wanted, 0 now)", effectName(fix.effect));
      return "";
  }
}

EffectCheck checkEffect(const FixRequest& fix, const RunMeasurement& baseline, const RunMeasurement& candidate,
                        double min_gain) {
  EffectCheck check;
  check.before = counted(fix.effect, baseline);
  check.after = counted(fix.effect, candidate);
  if (check.before < 0 || check.after < 0) return check;  // a faster step, or a count this run cannot know
  check.checkable = true;
  switch (fix.effect) {
    case Effect::kCompiles: check.shown = check.after > check.before; break;
    case Effect::kLessCompileTime: check.shown = check.after < check.before * (1.0 - min_gain); break;
    default: check.shown = check.after < check.before; break;
  }
  check.text = fmt::format("{}: {} -> {}", effectName(fix.effect), countText(fix.effect, check.before),
                           countText(fix.effect, check.after));
  return check;
}

}  // namespace torchscope::compiler
