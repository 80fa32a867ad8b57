// Host time by line of the user's code, from the collector's stack sampler (docs/FORMAT.md, *Sampled stacks*):
// the lines of the user's code where the sampled threads spent their time, self and total, per steady-state step.
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
  double self_cpu_s = -1;      // the threads' CPU time in `self_s`, -1 unknown
  double self_per_step_s = 0;  // self_s / steps (self_s when the run has no steps)
  double total_per_step_s = 0;
  double share = 0;  // self per step / mean steady-state step (self_s / run time without steps)
};

struct LineTable {
  bool recorded = false;     // the store has samples
  std::int64_t samples = 0;  // the samples counted
  std::int64_t steps = 0;    // the steady-state steps they come from; 0: the whole run (it has none)
  std::int64_t threads = 0;  // the threads sampled (with a sample counted)
  double sampled_s = 0;      // the wall time the counted samples stand for (summed over threads)
  // Samples of idle threads, left out of everything above (docs/rules.md, *Time by line of your code*): rows of a
  // thread other than the steps' that was on a CPU less than 1 % of their wall time (a compile worker waiting).
  std::int64_t idle_samples = 0;
  double idle_s = 0;
  double user_s = 0;            // the part of it with a user line on the stack
  double step_s = 0;            // the mean steady-state step, 0 without steps
  std::vector<LineTime> lines;  // most self time first, at most kTopLines
};

inline constexpr std::size_t kTopLines = 10;

// The table of one store: its own user-code roots widened by `user_code` (as `advise --user-code`).
[[nodiscard]] Result<LineTable> lineTable(const store::Reader& reader, const std::vector<std::string>& user_code = {});

}  // namespace torchscope::analyzer
