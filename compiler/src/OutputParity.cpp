// Parity of an inference job's outputs (Parity.h): each kept request of a candidate run against the same request of
// the baseline's, leaf by leaf.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "torchscope/compiler/Parity.h"

namespace torchscope::compiler {
namespace {

struct Difference {
  double max_abs = 0;
  double max_rel = 0;
  std::int64_t rows = 0;       // rows of class scores compared
  std::int64_t agree = 0;      // of them, with the same top-1 class
  std::string mismatch;        // the outputs do not have the same structure
  std::string not_comparable;  // an output could not be kept
  [[nodiscard]] double top1() const { return rows > 0 ? static_cast<double>(agree) / static_cast<double>(rows) : -1; }
};

std::string shapeText(const std::vector<std::int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

void compareLeaf(const OutputLeaf& b, const OutputLeaf& c, Difference& d) {
  if (b.path != c.path || b.shape != c.shape) {
    d.mismatch =
        fmt::format("{} has shape {}, the baseline's {} {}", c.path, shapeText(c.shape), b.path, shapeText(b.shape));
    return;
  }
  const double scale = std::max(std::fabs(b.abs_max), 1e-12);
  for (std::size_t i = 0; i < std::min(b.values.size(), c.values.size()); ++i) {
    const double diff = std::isnan(b.values[i]) != std::isnan(c.values[i])
                            ? std::numeric_limits<double>::infinity()
                            : (std::isnan(b.values[i]) ? 0.0 : std::fabs(c.values[i] - b.values[i]));
    d.max_abs = std::max(d.max_abs, diff);
    d.max_rel = std::max(d.max_rel, diff / scale);
  }
  const std::size_t rows = std::min(b.top1.size(), c.top1.size());
  d.rows += static_cast<std::int64_t>(rows);
  for (std::size_t i = 0; i < rows; ++i) d.agree += b.top1[i] == c.top1[i] ? 1 : 0;
}

void compareRequest(const RequestOutput& b, const RequestOutput& c, Difference& d) {
  if (!b.not_comparable.empty() || !c.not_comparable.empty()) {
    d.not_comparable = b.not_comparable.empty() ? c.not_comparable : b.not_comparable;
    return;
  }
  if (b.leaves.size() != c.leaves.size()) {
    d.mismatch =
        fmt::format("the candidate's output has {} tensor(s), the baseline's {}", c.leaves.size(), b.leaves.size());
    return;
  }
  for (std::size_t i = 0; i < b.leaves.size() && d.mismatch.empty(); ++i) compareLeaf(b.leaves[i], c.leaves[i], d);
}

Difference compareRuns(const std::vector<std::vector<RequestOutput>>& baseline,
                       const std::vector<std::vector<RequestOutput>>& candidate) {
  Difference d;
  for (std::size_t r = 0; r < std::min(baseline.size(), candidate.size()); ++r) {
    if (candidate[r].size() < baseline[r].size()) {
      d.mismatch = fmt::format("the candidate kept the outputs of {} request(s), the baseline {}", candidate[r].size(),
                               baseline[r].size());
      return d;
    }
    for (std::size_t i = 0; i < baseline[r].size(); ++i) {
      compareRequest(baseline[r][i], candidate[r][i], d);
      if (!d.mismatch.empty() || !d.not_comparable.empty()) return d;
    }
  }
  return d;
}

std::string toleranceText(double relative, double min_top1) {
  if (relative <= 0 && min_top1 >= 1) return "exact";
  return fmt::format("{:.0e} of each tensor's largest magnitude, {:.0f} % of the top-1 classes the same", relative,
                     min_top1 * 100);
}

}  // namespace

OutputTolerance outputTolerance(const std::vector<std::string>& fix_ids) {
  OutputTolerance loosest{0, 1.0, ""};
  for (const std::string& spec : fix_ids) {
    const std::string id = spec.substr(0, spec.find(':'));
    OutputTolerance tolerance{1e-4, 1.0, ""};
    if (id == "inference-mode") tolerance = {0, 1.0, ""};
    if (id == "channels-last") tolerance = {1e-5, 1.0, ""};
    if (id == "bf16-autocast") tolerance = {5e-2, 0.95, ""};
    if (id == "quantize-dynamic") tolerance = {1e-1, 0.90, ""};
    loosest.relative = std::max(loosest.relative, tolerance.relative);
    loosest.min_top1 = std::min(loosest.min_top1, tolerance.min_top1);
  }
  loosest.text = toleranceText(loosest.relative, loosest.min_top1);
  return loosest;
}

ParityResult compareOutputs(const std::vector<std::vector<RequestOutput>>& baseline,
                            const std::vector<std::vector<RequestOutput>>& candidate, const OutputTolerance& tolerance,
                            const std::vector<std::vector<RequestOutput>>& noise) {
  ParityResult result;
  result.basis = "outputs";
  result.tolerance = tolerance.text;
  if (std::none_of(baseline.begin(), baseline.end(), [](const auto& run) { return !run.empty(); })) {
    result.reason = "parity not checked: the job called no module with parameters, so no output was kept";
    return result;
  }
  result.checked = true;
  const Difference d = compareRuns(baseline, candidate);
  if (!d.not_comparable.empty()) {
    result.comparable = false;
    result.reason = "parity not comparable: " + d.not_comparable +
                    " (only tensors, numbers and tuples, lists, dicts "
                    "and dataclasses of them are compared)";
    return result;
  }
  if (!d.mismatch.empty()) {
    result.ok = false;
    result.reason = "parity: " + d.mismatch;
    return result;
  }
  result.max_abs_diff = d.max_abs;
  result.max_rel_diff = d.max_rel;
  result.top1_agreement = d.top1();
  double relative = tolerance.relative;
  double min_top1 = tolerance.min_top1;
  if (noise.size() >= 2) {
    const Difference own = compareRuns({noise[0]}, {noise[1]});
    // top1() is -1 without class scores: no disagreement.
    const bool top1_differs = own.top1() >= 0 && own.top1() < 1;
    if (own.mismatch.empty() && own.not_comparable.empty() && (own.max_rel > 0 || top1_differs)) {
      relative = std::max(relative, own.max_rel);
      if (own.top1() >= 0) min_top1 = std::min(min_top1, own.top1());
      result.tolerance =
          fmt::format("{}, widened to the baseline's own run-to-run difference ({:.3g} of the scale{})", tolerance.text,
                      own.max_rel,
                      own.top1() >= 0 ? fmt::format(", {:.1f} % of the top-1 classes the same", own.top1() * 100) : "");
    }
  }
  const bool top1_ok = result.top1_agreement < 0 || result.top1_agreement >= min_top1;
  if (d.max_rel > relative || !top1_ok) {
    result.ok = false;
    result.reason = fmt::format(
        "parity: the outputs differ by up to {:.3g} of their scale (max abs. diff {:.3g}){}; "
        "tolerance {}: the fix changes the answers",
        d.max_rel, d.max_abs,
        result.top1_agreement >= 0
            ? fmt::format(", {:.1f} % of the top-1 classes the same", result.top1_agreement * 100)
            : "",
        result.tolerance);
  }
  return result;
}

}  // namespace torchscope::compiler
