// Numerical parity between a baseline and a candidate run of the same job with the same seeds.
//
// The job reports its trajectory on stdout: every match of a regular expression (default: a
// number after a word ending in "loss", as in "loss=0.25", "train_loss: 0.25") is one value, in order. Two runs agree
// when they report the same number of values and every pair is within the relative tolerance.
// Error contract: a bad regular expression is an Error; comparison never throws.
//
// An inference job is compared on its outputs instead (docs/compiler.md, *Inference jobs*): the launcher keeps the
// outputs of its first requests leaf by leaf (torchscope_compiler/requests.py), and each leaf of a candidate's
// request must be within the fix's tolerance of the baseline's, relative to the leaf's largest magnitude, with the
// same top-1 class for class scores.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torchscope/base/Result.h"

namespace torchscope::compiler {

inline constexpr const char* kDefaultParityPattern =
    R"([A-Za-z_]*loss\s*[=:]?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?))";
inline constexpr double kDefaultParityTolerance = 1e-3;

// Every first capture group (or whole match when there is none) of `pattern` in `text`, as numbers.
[[nodiscard]] Result<std::vector<double>> extractParityValues(const std::string& text, const std::string& pattern);

struct ParityResult {
  bool ok = true;
  bool checked = false;     // false: the baseline reported no values, nothing was compared
  double max_rel_diff = 0;  // max |c - b| / max(|b|, |c|, 1e-12) over all compared pairs (outputs: over the leaf's
                            // largest magnitude)
  std::string reason;       // why it failed, or why it was not checked
  // Outputs only:
  std::string basis = "printed values";  // or "outputs"
  bool comparable = true;  // false: an output is no tensor or container of tensors; a fix is then not accepted
  double max_abs_diff = 0;
  double top1_agreement = -1;  // the share of rows with the same top-1 class, -1 without class scores
  std::string tolerance;       // the tolerance it was judged by, in words
};

// One tensor (or number) of a request's output; NaN stands for a value that was not finite.
struct OutputLeaf {
  std::string path;  // e.g. "output[0]['logits']"
  std::vector<std::int64_t> shape;
  std::vector<double> values;      // the first values, flattened
  double abs_max = 0;              // over the whole leaf
  std::vector<std::int64_t> top1;  // argmax per row of a batch of class scores, else empty
};
struct RequestOutput {
  std::vector<OutputLeaf> leaves;
  std::string not_comparable;  // why it could not be kept ("output is a mypkg.Result"), "" when kept
};

// How close a fix's outputs must be to the baseline's: relative to each leaf's largest magnitude, and the least
// share of rows whose top-1 class must agree.
struct OutputTolerance {
  double relative = 0;
  double min_top1 = 1.0;
  std::string text;  // "exact", "1e-04 relative, same top-1"
};
// By fix id: exact for inference-mode (it changes no arithmetic), 1e-5 and every top-1 class for channels-last (the
// NHWC convolution kernels sum in another order), 5e-2 and 95 % of the top-1
// classes for bf16-autocast, 1e-1 and 90 % for quantize-dynamic, 1e-4 for anything else (a compiled graph orders
// its float operations differently); a combination takes the loosest of its members'.
[[nodiscard]] OutputTolerance outputTolerance(const std::vector<std::string>& fix_ids);

// Compares request i of candidate run r with request i of baseline run r (each a run's kept outputs); `noise`: two
// baseline runs' outputs, whose own differences widen the tolerance (a job whose outputs differ run to run).
[[nodiscard]] ParityResult compareOutputs(const std::vector<std::vector<RequestOutput>>& baseline,
                                          const std::vector<std::vector<RequestOutput>>& candidate,
                                          const OutputTolerance& tolerance,
                                          const std::vector<std::vector<RequestOutput>>& noise = {});

// Compares repetition i of the candidate with repetition i of the baseline.
[[nodiscard]] ParityResult compareParity(const std::vector<std::vector<double>>& baseline,
                                         const std::vector<std::vector<double>>& candidate, double tolerance);

}  // namespace torchscope::compiler
