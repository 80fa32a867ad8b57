// Numerical parity between a baseline and a candidate run of the same job with the same seeds.
//
// The job reports its trajectory on stdout: every match of a regular expression (default: a
// number after a word ending in "loss", as in "loss=0.25", "train_loss: 0.25") is one value, in order. Two runs agree
// when they report the same number of values and every pair is within the relative tolerance.
// Error contract: a bad regular expression is an Error; comparison never throws.
#pragma once

#include <string>
#include <vector>

#include "torchscope/base/Result.h"

namespace torchscope::compiler {

inline constexpr const char* kDefaultParityPattern = R"([A-Za-z_]*loss\s*[=:]?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?))";
inline constexpr double kDefaultParityTolerance = 1e-3;

// Every first capture group (or whole match when there is none) of `pattern` in `text`, as numbers.
[[nodiscard]] Result<std::vector<double>> extractParityValues(const std::string& text, const std::string& pattern);

struct ParityResult {
  bool ok = true;
  bool checked = false;      // false: the baseline reported no values, nothing was compared
  double max_rel_diff = 0;   // max |c - b| / max(|b|, |c|, 1e-12) over all compared pairs
  std::string reason;        // why it failed, or why it was not checked
};

// Compares repetition i of the candidate with repetition i of the baseline.
[[nodiscard]] ParityResult compareParity(const std::vector<std::vector<double>>& baseline,
                                         const std::vector<std::vector<double>>& candidate, double tolerance);

}  // namespace torchscope::compiler
