#include "torchscope/compiler/Parity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>

namespace torchscope::compiler {

Result<std::vector<double>> extractParityValues(const std::string& text, const std::string& pattern) {
  std::regex expression;
  try {
    expression = std::regex(pattern, std::regex::ECMAScript | std::regex::icase | std::regex::multiline);
  } catch (const std::regex_error& error) {
    return makeError(ErrorCode::kInvalidArgument, "bad parity pattern '" + pattern + "': " + error.what());
  }
  std::vector<double> values;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), expression); it != std::sregex_iterator(); ++it) {
    const auto& match = *it;
    const std::string number = match.size() > 1 && match[1].matched ? match[1].str() : match[0].str();
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    if (end != number.c_str()) values.push_back(value);
  }
  return values;
}

ParityResult compareParity(const std::vector<std::vector<double>>& baseline,
                           const std::vector<std::vector<double>>& candidate, double tolerance) {
  ParityResult result;
  const bool baseline_reports = std::any_of(baseline.begin(), baseline.end(), [](const auto& v) { return !v.empty(); });
  if (!baseline_reports) {
    result.reason = "parity not checked: the job printed no parity values";
    return result;
  }
  result.checked = true;
  const std::size_t pairs = std::min(baseline.size(), candidate.size());
  for (std::size_t r = 0; r < pairs; ++r) {
    if (baseline[r].size() != candidate[r].size()) {
      result.ok = false;
      result.reason = fmt::format("parity: the candidate reported {} values, the baseline {}", candidate[r].size(),
                                  baseline[r].size());
      return result;
    }
    for (std::size_t i = 0; i < baseline[r].size(); ++i) {
      const double b = baseline[r][i];
      const double c = candidate[r][i];
      const double scale = std::max({std::fabs(b), std::fabs(c), 1e-12});
      const double diff = (std::isnan(b) != std::isnan(c)) ? INFINITY : (std::isnan(b) ? 0.0 : std::fabs(c - b) / scale);
      result.max_rel_diff = std::max(result.max_rel_diff, diff);
    }
  }
  if (result.max_rel_diff > tolerance) {
    result.ok = false;
    result.reason = fmt::format("parity: values differ by up to {:.3g} (relative), tolerance {:.3g}",
                                result.max_rel_diff, tolerance);
  }
  return result;
}

}  // namespace torchscope::compiler
