// Host time by line of the user's code, from the collector's stack sampler (docs/FORMAT.md, *Sampled stacks*):
// the lines of the user's code where the sampled threads spent their time, self and total, per steady-state step.
// The lines with the most self time lead, then those listed for their total alone (a call into the user's own code).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torchscope/base/Result.h"
#include "torchscope/store/Reader.h"

namespace torchscope::analyzer {

// One line of the user's code. Self: the samples whose innermost user frame is this line (the time of the torch
// and library code it calls is its own); total: the samples with this line anywhere on the stack.
struct LineTime {
  std::string file;
  std::int64_t line = -1;
  std::string function;
  std::int64_t self_samples = 0;
  std::int64_t total_samples = 0;
  double self_s = 0;  // sampled wall time over the counted samples
  double total_s = 0;
  double self_cpu_s = -1;  // the threads' CPU time in `self_s`, -1 unknown
  // Per step: the share times the mean steady-state step (self_s, total_s when no steady-state step holds a sample).
  double self_per_step_s = 0;
  double total_per_step_s = 0;
  // Shares of the time the samples stand for: self_s (total_s) over the sampled time of the most sampled thread.
  double share = 0;
  double total_share = 0;
};

struct LineTable {
  bool recorded = false;     // the store has samples
  std::int64_t samples = 0;  // the samples counted
  std::int64_t steps = 0;    // the steady-state steps they come from; 0: the whole run
  // When `steps` is 0 although the run has steady-state steps (none of them holds a sample): how many it has.
  std::int64_t unsampled_steady_steps = 0;
  std::int64_t threads = 0;  // the threads sampled (with a sample counted)
  double sampled_s = 0;      // the wall time the counted samples stand for (summed over threads)
  // Samples of idle threads, left out of everything above (docs/rules.md, *Time by line of your code*): rows of a
  // thread other than the steps' that was on a CPU less than 1 % of their wall time (a compile worker waiting).
  std::int64_t idle_samples = 0;
  double idle_s = 0;
  double user_s = 0;  // the part of it with a user line on the stack
  // The shares' base: the sampled time of the most sampled thread (the steps' thread, whose samples cover the steps
  // back to back). A sample stands for the time since the previous one, which may reach back before the steady-state
  // steps (to the warm-up step), so the steps' own time is no base for it when a sample spans many steps.
  double base_s = 0;
  double step_s = 0;  // the mean steady-state step, 0 without steps
  // The kTopLines lines with the most self time, most first, then those of the kTopLines with the most total time
  // that are not among them (a line that calls a function of the user's code), most total first.
  std::vector<LineTime> lines;
};

inline constexpr std::size_t kTopLines = 10;

// What sampled figures cover, in the words of every report: "the 9 steady-state step(s)", or the whole run and why.
[[nodiscard]] std::string sampledSpan(std::int64_t steps, std::int64_t unsampled_steady_steps);

// The table of one store: its own user-code roots widened by `user_code` (as `advise --user-code`).
[[nodiscard]] Result<LineTable> lineTable(const store::Reader& reader, const std::vector<std::string>& user_code = {});

}  // namespace torchscope::analyzer
