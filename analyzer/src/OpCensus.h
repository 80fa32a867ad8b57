// The bridge's op census of one eager step (docs/FORMAT.md, `op_census`), as the rules read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "torchscope/base/Result.h"
#include "torchscope/store/Reader.h"

namespace torchscope::analyzer {

struct OpCensus {
  base::Nanos start_ns = 0;    // the counted step's start to the end of the census's own work: steps it overlaps
  base::Nanos end_ns = 0;      // are no steady-state steps
  std::int64_t step = -1;      // the counted step's index
  std::int64_t ops = 0;        // aten ops dispatched below autograd in that step
  std::int64_t short_ops = 0;  // those shorter than short_op_threshold_ns
  base::Nanos op_ns = 0;
  base::Nanos short_op_ns = 0;
  base::Nanos step_ns = 0;  // the counted step's wall time (slower than the others: every op was timed)
  base::Nanos short_op_threshold_ns = 0;
  base::Nanos op_overhead_ns = -1;  // one small eager op's cost, measured beside the job; -1 not recorded
  std::string model;                // the first module the step called, and the user's line that called it
  std::string model_file;
  std::int64_t model_line = -1;
  std::string model_function;
  std::string step_file;  // the user's line that ended the step (backward(), optimizer.step(), ...)
  std::int64_t step_line = -1;
  std::string step_function;
  struct FrequentOp {
    std::string name;
    std::int64_t count = 0;
    base::Nanos nanos = 0;
  };
  std::vector<FrequentOp> frequent_ops;  // most frequent first
  // The user's line that issued some of the step's ops (docs/FORMAT.md, `sites`).
  struct Site {
    enum class Context { kModel, kBackward, kOutside };
    Context context = Context::kOutside;
    std::string file;
    std::int64_t line = -1;
    std::string function;
    std::string via;  // model: the module's class; else the library function the line called ("" torch's own ops)
    std::int64_t ops = 0;
    std::int64_t short_ops = 0;
    base::Nanos op_ns = 0;
    base::Nanos short_op_ns = 0;
    base::Nanos gap_ns = 0;  // the Python time before its ops, since the previous op
    std::vector<FrequentOp> frequent_ops;
  };
  std::vector<Site> sites;  // most ops first; empty in a store from before sites were recorded
};

// The first census of the store, nullopt when it has none (a compiled job, TORCHSCOPE_CENSUS=0, an older store).
[[nodiscard]] Result<std::optional<OpCensus>> loadOpCensus(const store::Reader& reader);

}  // namespace torchscope::analyzer
