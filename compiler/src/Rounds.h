// The sequential runs of a fix experiment: rounds of one baseline run and one run of every fix
// still measured, the checks after a fix's first run (effect, parity, exit code), the looks after
// each round that stop a fix (Sequential.h), the combined variant, and one progress line per run
// with an estimate of the time left. With FixOptions::parallel_runs > 1 the runs of a round go in
// waves of that many at once, the second baseline run beside the first, a wave's free slots taken
// by the fixes' next runs (a fix measured alone gets its first two runs in one wave), and the
// combination's runs in waves of their own.
#pragma once

#include <string>
#include <vector>

#include "Runner.h"
#include "torchscope/compiler/Experiment.h"
#include "torchscope/compiler/Measurement.h"

namespace torchscope::compiler {

// A variant being measured against the baseline: a fix, or the accepted fixes together.
struct Arm {
  Variant variant;
  FixRequest request;         // for the combined arm: effect kFasterStep, nothing to check
  std::size_t outcome_index = 0;  // into FixReport::fixes; unused for the combined arm
  bool stopped = false;
};

class Rounds {
 public:
  Rounds(const FixOptions& options, Runner& runner, FixReport& report, Variant& baseline);

  // The first baseline run (beside the second when runs go in parallel); an Error when it could not
  // be started.
  [[nodiscard]] Result<const RunMeasurement*> runFirstBaseline();
  void setVerdictMetric(const Metric& metric) { verdict_ = metric; }

  // Runs rounds until every arm has stopped; records each arm's verdict interval and effect check
  // in its outcome.
  [[nodiscard]] Result<void> runFixes(std::vector<Arm>& arms);
  // Runs the combined arm against the baseline runs made, with the noise of every arm.
  [[nodiscard]] Result<void> runCombined(Arm& combined, FixOutcome& outcome, const std::vector<Arm>& arms);

 private:
  struct PlannedRun {
    Variant* variant;
    std::string label;
  };
  // Runs the plan, parallel_runs at a time; each run is appended to its variant in plan order.
  [[nodiscard]] Result<void> runWaves(const std::vector<PlannedRun>& plan);
  [[nodiscard]] SpeedupInterval verdictInterval(const Variant& candidate, const std::vector<const Variant*>& all,
                                                double confidence) const;
  // True when the arm must stop after its run `index`: it failed, broke parity or showed no effect.
  bool checkRun(Arm& arm, FixOutcome& outcome, std::size_t index);
  void reportRun(const Variant& variant, const RunMeasurement& run, const std::string& tally);
  [[nodiscard]] std::string timeLeft() const;

  const FixOptions& options_;
  Runner& runner_;
  FixReport& report_;
  Variant& baseline_;
  Metric verdict_;
  const std::vector<Arm>* arms_ = nullptr;  // the fixes, for the estimate of the time left
  const Arm* combined_ = nullptr;
  int round_ = 0;
};

// The runs of `variant` that exited 0, as values of `metric`.
[[nodiscard]] std::vector<double> metricRuns(const Variant& variant, const Metric& metric, int warmup_steps);

}  // namespace torchscope::compiler
