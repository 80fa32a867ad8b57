// Eager versus compiled, per compiled region (`torchscope fix --fixes torch-compile` on an eager job, `--fixes
// eager` on a compiled one): the compiled run's regions (its `compiled_region` rows) matched with the same regions
// timed per call in a run with compilation off, their speed-up, and the calls after which their compile time is
// paid off. The eager side is a region timer, not the stack sampler's line time: it times exactly the code the
// compiled region covers, every call, and needs no sampling (off by default) nor a line that calls nothing else.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "torchscope/analyzer/Regions.h"
#include "torchscope/base/Result.h"

namespace torchscope::compiler {

struct CompileWorth {
  std::string compiled_store;  // the run that compiled, and the run that did not
  std::string eager_store;
  // The compiled run's timed regions (analyzer/Regions.h rows: name, call line, calls, compile time, wall time per
  // steady-state call compiled and eager, speed-up, calls to pay off, saved time), most saved first.
  std::vector<analyzer::Region> regions;
  double compile_s = 0;         // the compiled run's compile time
  double saved_s = 0;           // the regions' saved time, summed (negative: they lost)
  double compiled_step_s = -1;  // median steady-state step of each run, -1 none
  double eager_step_s = -1;
  std::vector<std::string> notes;

  [[nodiscard]] bool pays() const { return saved_s >= compile_s; }  // as analyzer::RegionTable::pays()
  // In plain words: whether compilation pays at this run length, and which regions carry the gain.
  [[nodiscard]] std::string verdict() const;
};

// The fix report's parts: JSON {"compile_s", "saved_s", "pays", "verdict", "compiled_store", "eager_store",
// "compiled_step_s", "eager_step_s", "regions": [{name, call_file, call_line, calls, eager_calls, compile_s,
// compiled_per_call_s, eager_per_call_s, speedup, payoff_calls, saved_s}], "notes"}, and indented text lines. Per call:
// the wall time of the calls in each run's steady-state steps (Region::wall_per_call_s).
[[nodiscard]] nlohmann::json compileWorthJson(const CompileWorth& worth);
[[nodiscard]] std::string compileWorthText(const CompileWorth& worth, const std::string& indent);

// The regions of `compiled_store` against `eager_store` (both stores of the same job under the collector).
[[nodiscard]] Result<CompileWorth> compileWorth(const std::string& compiled_store, const std::string& eager_store);

}  // namespace torchscope::compiler
